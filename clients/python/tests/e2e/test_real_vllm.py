"""Against two real vLLM engines (the CPU build, VLLM_SERVER_DEV_MODE=1) behind the real vllm-router,
serving the tiny random-weight model, with an API key. Deployed by test/e2e/python-client.e2e.test.ts."""

from __future__ import annotations

import os
import threading
import time

import httpx
import pytest
from tokenizers import Tokenizer

from vllm_fleet import Fleet, WeightMismatch


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.from_file(os.path.join(os.environ["FLEET_TINY_MODEL"], "tokenizer.json"))


def decodes_to(tokenizer: Tokenizer, ids: list[int], text: str) -> bool:
    """The ids decode to the text, but for the bytes of a character still unfinished at the end: with
    byte-fallback tokens (a random-weight model emits many) vLLM's incremental detokenizer holds those
    back, where a whole-sequence decode shows each as U+FFFD."""
    decoded = tokenizer.decode(ids, skip_special_tokens=False)
    return decoded.rstrip("\ufffd") == text.rstrip("\ufffd") and decoded.startswith(text)


@pytest.fixture(scope="module")
def admin(fleet: Fleet) -> httpx.Client:
    """Direct engine calls the test makes behind the client's back, with the fleet's key."""
    with httpx.Client(headers={"Authorization": f"Bearer {os.environ['VLLM_API_KEY']}"}, timeout=120) as c:
        yield c


def test_contract_from_the_jobs_endpoints_file(fleet: Fleet) -> None:
    e = fleet.endpoints
    # An island's endpoints.json does not say whether a key is needed (the contract does); the key came from VLLM_API_KEY.
    assert e.engine == "vllm" and e.api_key_required is None
    assert len(e.engines) == 2 and len(e.islands) == 1
    assert e.islands[0].router is not None and e.islands[0].router.url.endswith("/v1")


def test_status_ready_and_metrics(fleet: Fleet) -> None:
    s = fleet.status()
    assert s.status == "READY", s
    assert [p.status for p in s.islands[0].processes] == ["READY"] * 3  # router + 2 engines
    m = fleet.metrics()
    assert m["scraped"] == 2 and m["of"] == 2
    assert set(m["totals"]) >= {"running", "waiting", "kv_cache_usage", "prompt_tokens", "generation_tokens"}


def test_a_wrong_key_is_not_reported_as_a_state(endpoints_file: str) -> None:
    with Fleet.from_endpoints(endpoints_file, api_key="sk-wrong") as wrong:
        with pytest.raises(Exception, match="refused GET /v1/models .* not observed"):
            wrong.status()


def test_generate_prompts_token_ids_decode_with_the_tokenizer(fleet: Fleet, tokenizer: Tokenizer) -> None:
    prompts = ["the fleet serves", "weights change, sessions stay"]
    out = fleet.generate(prompts, temperature=0.0, do_sample=False, max_tokens=6)
    assert len(out.completions) == len(out.token_ids) == len(out.metadata) == 2
    for i, prompt in enumerate(prompts):
        ids = out.token_ids[i]
        assert len(ids) == 6
        assert decodes_to(tokenizer, ids, out.completions[i]), (tokenizer.decode(ids), out.completions[i])
        # The prompt's ids are the tokenizer's (with the BOS its post-processor adds, as vLLM does).
        assert out.prompt_token_ids[i] == tokenizer.encode(prompt).ids
        meta = out.metadata[i]
        # The InferenceEngine wrapper's metadata and NexRL's training fields, field for field.
        assert meta["response_ids"] == ids and meta["response_mask"] == [1] * 6
        assert meta["nexrl_train"] == {
            "prompt_tokens": out.prompt_token_ids[i],
            "response_tokens": ids,
            "response_logprobs": out.logprobs[i],
        }
        assert len(out.logprobs[i]) == 6 and all(lp <= 0 for lp in out.logprobs[i])
    # Greedy is deterministic: the same prompt gives the same ids on either engine.
    again = fleet.generate(prompts[0], do_sample=False, max_tokens=6)
    assert again.token_ids[0] == out.token_ids[0]


def test_generate_conversations(fleet: Fleet, tokenizer: Tokenizer) -> None:
    conversations = [
        [{"role": "user", "content": "Hello!"}],
        [{"role": "system", "content": "You are a pirate."}, {"role": "user", "content": "How are you?"}],
    ]
    out = fleet.generate(conversations, max_tokens=5, temperature=0.9, top_p=0.95, top_k=50)
    assert len(out.completions) == 2
    for i in range(2):
        assert len(out.token_ids[i]) == 5
        assert decodes_to(tokenizer, out.token_ids[i], out.completions[i])
        assert len(out.prompt_token_ids[i]) > 0 and len(out.logprobs[i]) == 5


def _paused(admin: httpx.Client, fleet: Fleet) -> list[bool]:
    return [admin.get(e.origin + "/is_paused").json()["is_paused"] for e in fleet.endpoints.engines]


def test_pause_holds_generation_until_resume(fleet: Fleet, endpoints_file: str, admin: httpx.Client) -> None:
    fleet.pause()
    try:
        assert _paused(admin, fleet) == [True, True]
        done: dict[str, object] = {}
        # Another client (no shared gate): the engines themselves hold its request.
        other = Fleet.from_endpoints(endpoints_file)
        t_other = threading.Thread(target=lambda: done.setdefault("other", other.generate("held by the engine", max_tokens=3)))
        # This client: generate() waits while the weights may change.
        t_own = threading.Thread(target=lambda: done.setdefault("own", fleet.generate("held by the client", max_tokens=3)))
        t_other.start()
        t_own.start()
        time.sleep(4)
        assert "other" not in done and "own" not in done, "generation went on while paused"
    finally:
        fleet.resume()
    t_other.join(120)
    t_own.join(120)
    assert len(done["other"].token_ids[0]) == 3 and len(done["own"].token_ids[0]) == 3
    assert _paused(admin, fleet) == [False, False]
    other.close()


def test_weight_sync_loop_and_ledger(fleet: Fleet, admin: httpx.Client) -> None:
    model_dir = os.environ["FLEET_TINY_MODEL"]
    before = fleet.generate("ledger", do_sample=False, max_tokens=6).token_ids[0]

    # The trainer's whole loop: three calls.
    fleet.pause()
    report = fleet.update_weights(model_dir, version="step-1")
    ledger = fleet.resume()["ledger"]
    assert ledger["method"] == "engine report"
    assert all(v["version"] == "step-1" for v in ledger["engines"].values())
    assert all(r.ok for r in report["results"]) and len(report["results"]) == 2

    a, b = fleet.endpoints.engines
    # One engine labelled otherwise: the ledger names it alone.
    admin.post(b.origin + "/update_weight_version", json={"new_version": "rogue"}).raise_for_status()
    with pytest.raises(WeightMismatch) as mismatch:
        fleet.verify_weights("step-1")
    assert mismatch.value.differing == [b.name]
    assert "reports weight version 'rogue'" in str(mismatch.value)

    # One engine's weights zeroed (vLLM's own /weight_checker reset): its checksums differ.
    admin.post(b.origin + "/weight_checker", json={"action": "reset"}).raise_for_status()
    with pytest.raises(WeightMismatch) as zeroed:
        fleet.verify_weights()
    assert b.name in zeroed.value.differing and "checksums differ" in str(zeroed.value)

    # One call (it pauses and resumes by itself) puts the real weights back on every engine.
    fleet.update_weights(model_dir, version="step-2")
    assert _paused(admin, fleet) == [False, False]
    assert fleet.verify_weights("step-2")["method"] == "engine report"
    assert fleet.generate("ledger", do_sample=False, max_tokens=6).token_ids[0] == before
