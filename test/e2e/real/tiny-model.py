#!/usr/bin/env python3
"""Builds a tiny random-weight Llama-style model in Hugging Face format, with no download.

The weights come from a seeded generator and the byte-level BPE tokenizer is trained here on text
generated from the same seed, so the same seed gives the same files. The model serves real tokens and
logprobs through vLLM; what it writes is gibberish, and no test may depend on the words.

usage: tiny-model.py OUT_DIR [--seed N]
"""
import argparse
import json
import os
import random

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

# A chat template in the Qwen/ChatML style: the chat tests need one, and a tool-call parser reads it.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
WORDS = (
    "the a fleet of engines serves tokens to trainers router replica prefill decode cache node rank "
    "expert weight update policy reward rollout step batch prompt completion sample logprob"
).split()


def corpus(rng: random.Random, lines: int = 4000):
    for _ in range(lines):
        yield " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 16))) + "."


def build_tokenizer(rng: random.Random) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(corpus(rng)), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)

    tokenizer = build_tokenizer(rng)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,  # the CPU attention kernels support 32, 64, 80, 96, 112, 128, ... (not 16)
        max_position_embeddings=2048,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        torch_dtype="bfloat16",
    )
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    os.makedirs(args.out, exist_ok=True)
    model.save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    with open(os.path.join(args.out, "tiny-model.json"), "w") as f:
        json.dump({"seed": args.seed, "built_by": "test/e2e/real/tiny-model.py"}, f)


if __name__ == "__main__":
    main()
