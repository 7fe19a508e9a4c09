"""generate(): the generate() signature and output of a VERL + SGLang InferenceEngine wrapper, with NexRL's training fields
(prompt token ids, response token ids, their logprobs), sent through each island's router with a
session header, over the OpenAI client."""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

import openai

from .endpoints import Island, ServiceEndpoints, api_base
from .errors import FleetError

Message = Mapping[str, Any]
Prompts = Union[str, Sequence[str], Sequence[Message], Sequence[Sequence[Message]]]

_TOKEN_ID = re.compile(r"^token_id:(\d+)$")


@dataclass
class GenerationOutput:
    """What a VERL + SGLang InferenceEngine wrapper returns, position by position with the prompts."""

    completions: list[str]
    token_ids: list[list[int]]
    metadata: list[dict[str, Any]]
    """Per completion: the wrapper's `response_ids` and `response_mask`; NexRL's `nexrl_train`
    (`prompt_tokens`, `response_tokens`, `response_logprobs`); `prompt_token_ids`, `logprobs`,
    `finish_reason`, `session_id` and `island`."""
    prompt_token_ids: list[list[int]] = field(default_factory=list)
    logprobs: list[list[float]] = field(default_factory=list)

    def nexrl_train(self, i: int = 0) -> dict[str, list[Any]]:
        train: dict[str, list[Any]] = self.metadata[i]["nexrl_train"]
        return train


def as_requests(prompts: Prompts) -> tuple[str, list[Any]]:
    """("completion", [str...]) or ("chat", [[message...]...]); a bare conversation is a batch of one."""
    if isinstance(prompts, str):
        return "completion", [prompts]
    items = list(prompts)
    if not items:
        raise FleetError("generate() needs at least one prompt")
    if all(isinstance(p, str) for p in items):
        return "completion", items
    if all(isinstance(p, Mapping) for p in items):
        return "chat", [items]
    if all(isinstance(p, Sequence) and not isinstance(p, str) and all(isinstance(m, Mapping) for m in p) for p in items):
        return "chat", [list(p) for p in items]
    raise FleetError("generate() takes a prompt, a list of prompts, a conversation (a list of messages) or a list of conversations")


def sampling(engine: str, temperature: float, top_p: float, top_k: int, do_sample: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """(OpenAI arguments, extra_body) for the sampling parameters; do_sample=False is greedy."""
    if not do_sample:
        temperature, top_p, top_k = 0.0, 1.0, -1
    extra: dict[str, Any] = {
        "return_token_ids": True,  # vLLM >= 0.10.2 and SGLang: token_ids on each choice, prompt_token_ids beside
        "skip_special_tokens": False,
        "include_stop_str_in_output": True,
    }
    if engine == "sglang":
        extra.pop("include_stop_str_in_output")
        extra["no_stop_trim"] = True
        extra["return_prompt_token_ids"] = True  # chat's prompt ids (its completions return them with return_token_ids)
    else:
        extra["return_tokens_as_token_ids"] = True  # logprob tokens as "token_id:N", as NexRL asks
    if top_k is not None and top_k > 0:
        extra["top_k"] = top_k
    return {"temperature": temperature, "top_p": top_p}, extra


def _extra(obj: Any, key: str) -> Any:
    """A field the OpenAI SDK's models do not declare (vLLM's and SGLang's additions)."""
    extra = getattr(obj, "model_extra", None) or {}
    return extra.get(key, getattr(obj, key, None))


def _ids_from_logprob_tokens(tokens: Sequence[str] | None) -> list[int] | None:
    if not tokens:
        return None
    out = []
    for t in tokens:
        m = _TOKEN_ID.match(t)
        if not m:
            return None
        out.append(int(m.group(1)))
    return out


def parse_completion(resp: Any) -> dict[str, Any]:
    choice = resp.choices[0]
    lp = choice.logprobs
    logprobs = [float(x) if x is not None else 0.0 for x in (lp.token_logprobs or [])] if lp is not None else []
    ids = _extra(choice, "token_ids") or _ids_from_logprob_tokens(lp.tokens if lp is not None else None) or []
    prompt_ids = _extra(choice, "prompt_token_ids") or _extra(resp, "prompt_token_ids") or []
    return {"text": choice.text, "ids": list(ids), "prompt_ids": list(prompt_ids), "logprobs": logprobs, "finish": choice.finish_reason}


def parse_chat(resp: Any) -> dict[str, Any]:
    choice = resp.choices[0]
    content = choice.logprobs.content if choice.logprobs is not None and choice.logprobs.content else []
    logprobs = [float(c.logprob) for c in content]
    # vLLM: choice.token_ids; SGLang's chat: choice.response_token_ids (completions: token_ids).
    ids = _extra(choice, "token_ids") or _extra(choice, "response_token_ids") or _ids_from_logprob_tokens([c.token for c in content]) or []
    prompt_ids = _extra(resp, "prompt_token_ids") or _extra(choice, "prompt_token_ids") or []
    return {"text": choice.message.content or "", "ids": list(ids), "prompt_ids": list(prompt_ids), "logprobs": logprobs, "finish": choice.finish_reason}


def island_for(svc: ServiceEndpoints, session_id: str) -> Island:
    """A session's island: fixed by its id, so every turn meets the same router and its engine's cache."""
    n = int(hashlib.sha256(session_id.encode()).hexdigest()[:8], 16)
    return svc.islands[n % len(svc.islands)]


def new_session_id() -> str:
    return uuid.uuid4().hex


def one(
    client: openai.OpenAI,
    svc: ServiceEndpoints,
    kind: str,
    prompt: Any,
    session_id: str,
    args: dict[str, Any],
    extra: dict[str, Any],
    max_tokens: int,
    logprobs: bool,
    model: str,
) -> dict[str, Any]:
    island = island_for(svc, session_id)
    header = island.router.session_header if island.router else None
    headers = {header: session_id} if header else {}
    base = island.base_url
    if kind == "chat" and svc.engine == "sglang" and island.router is not None and all(e.role == "replica" for e in island.engines):
        # sglang-router 0.3.2 re-serialises chat responses without SGLang's response_token_ids and
        # prompt_token_ids (completions pass through whole): chats go to an engine directly, by session.
        n = int(hashlib.sha256(session_id.encode()).hexdigest()[8:16], 16)
        base = api_base(svc.engine, island.engines[n % len(island.engines)].admin_url)
    c = client.with_options(base_url=base)
    if kind == "completion":
        resp = c.completions.create(
            model=model, prompt=prompt, max_tokens=max_tokens, logprobs=1 if logprobs else None,
            extra_body=extra, extra_headers=headers, **args,
        )
        out = parse_completion(resp)
    else:
        resp = c.chat.completions.create(
            model=model, messages=prompt, max_tokens=max_tokens, logprobs=logprobs,
            extra_body=extra, extra_headers=headers, **args,
        )
        out = parse_chat(resp)
    if not out["ids"] and resp.usage is not None and resp.usage.completion_tokens:
        raise FleetError(
            f"island {island.island}'s answer carries no token ids ({resp.usage.completion_tokens} tokens generated through {base}): "
            "the engine or router in between dropped them"
        )
    out["island"] = island.island
    out["session_id"] = session_id
    return out


def assemble(results: list[dict[str, Any]]) -> GenerationOutput:
    metadata = []
    for r in results:
        metadata.append(
            {
                "response_ids": r["ids"],
                "response_mask": [1] * len(r["ids"]),
                "prompt_token_ids": r["prompt_ids"],
                "logprobs": r["logprobs"],
                "finish_reason": r["finish"],
                "session_id": r["session_id"],
                "island": r["island"],
                "nexrl_train": {
                    "prompt_tokens": r["prompt_ids"],
                    "response_tokens": r["ids"],
                    "response_logprobs": r["logprobs"],
                },
            }
        )
    return GenerationOutput(
        completions=[r["text"] for r in results],
        token_ids=[r["ids"] for r in results],
        metadata=metadata,
        prompt_token_ids=[r["prompt_ids"] for r in results],
        logprobs=[r["logprobs"] for r in results],
    )
