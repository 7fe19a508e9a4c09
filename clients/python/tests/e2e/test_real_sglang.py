"""Against the real SGLang server (0.5.23, CPU) behind the real sglang-router, serving the tiny
random-weight model, with an API key. Deployed by test/e2e/python-client.e2e.test.ts."""

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


def test_the_contract_names_sglang_and_its_root_admin_url(fleet: Fleet) -> None:
    e = fleet.endpoints
    assert e.engine == "sglang" and len(e.engines) == 1
    assert not e.engines[0].admin_url.endswith("/v1")  # SGLang's admin routes sit at its root
    assert fleet.status().status == "READY"
    assert fleet.metrics()["scraped"] == 1


def test_generate_token_ids_and_logprobs(fleet: Fleet, tokenizer: Tokenizer) -> None:
    out = fleet.generate(["the fleet serves", "sessions stay"], do_sample=False, max_tokens=5)
    for i in range(2):
        ids = out.token_ids[i]
        assert len(ids) == 5 and len(out.logprobs[i]) == 5
        decoded = tokenizer.decode(ids, skip_special_tokens=False)
        # SGLang, too, holds back the bytes of a character unfinished at the end.
        assert decoded.rstrip("\ufffd") == out.completions[i].rstrip("\ufffd") and decoded.startswith(out.completions[i])
        # SGLang's completions add no BOS to a raw prompt.
        assert out.prompt_token_ids[i] == tokenizer.encode(["the fleet serves", "sessions stay"][i], add_special_tokens=False).ids
        assert out.metadata[i]["nexrl_train"]["response_tokens"] == ids
    chat = fleet.generate([[{"role": "user", "content": "hi"}]], max_tokens=4, temperature=0.7)
    assert len(chat.token_ids[0]) == 4 and len(chat.prompt_token_ids[0]) > 0


def test_pause_holds_generation_until_resume(fleet: Fleet, endpoints_file: str) -> None:
    fleet.pause()
    done: dict[str, object] = {}
    other = Fleet.from_endpoints(endpoints_file)
    try:
        t = threading.Thread(target=lambda: done.setdefault("other", other.generate("held by the engine", max_tokens=3)))
        t.start()
        time.sleep(4)
        assert "other" not in done, "SGLang generated while paused"
    finally:
        fleet.resume()
    t.join(180)
    assert len(done["other"].token_ids[0]) == 3
    other.close()


def test_weight_sync_and_the_ledger_on_sglangs_weight_version(fleet: Fleet) -> None:
    model_dir = os.environ["FLEET_TINY_MODEL"]
    before = fleet.generate("ledger", do_sample=False, max_tokens=5).token_ids[0]
    fleet.pause()
    fleet.update_weights(model_dir, version="step-1")
    ledger = fleet.resume()["ledger"]
    assert ledger["method"] == "engine report"
    assert [v["version"] for v in ledger["engines"].values()] == ["step-1"]
    (engine,) = fleet.endpoints.engines
    key = {"Authorization": f"Bearer {os.environ['VLLM_API_KEY']}"}
    httpx.post(engine.admin_url + "/update_weight_version", json={"new_version": "rogue"}, headers=key, timeout=60).raise_for_status()
    with pytest.raises(WeightMismatch) as mismatch:
        fleet.verify_weights("step-1")
    assert mismatch.value.differing == [engine.name]
    assert fleet.generate("ledger", do_sample=False, max_tokens=5).token_ids[0] == before
