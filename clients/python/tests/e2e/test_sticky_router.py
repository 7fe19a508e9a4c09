"""prime-rl's routing today: its router (PrimeIntellect's v0.2.1, here the vllm-router TEST STAND-IN
behaving as that release) with sticky_least_loaded in front of prime-rl's per-rank topology (stand-in
servers). The client sends each session's header and finishes the sessions it opened. Deployed by
test/e2e/python-client.e2e.test.ts, which passes the router's metrics URL."""

from __future__ import annotations

import os

import httpx

from vllm_fleet import Fleet


def _router_figures() -> dict[str, float]:
    text = httpx.get(os.environ["FLEET_CLIENT_ROUTER_METRICS"], timeout=10).text
    return {line.split()[0]: float(line.split()[1]) for line in text.splitlines() if line.startswith("standin_router_")}


def _requests(fleet: Fleet) -> list[int]:
    return [httpx.get(e.origin + "/standin/state", timeout=10).json()["requests"] for e in fleet.endpoints.engines]


def test_the_contract_says_the_router_finishes_sessions(fleet: Fleet) -> None:
    router = fleet.endpoints.islands[0].router
    assert router is not None
    assert (router.kind, router.policy, router.finish_session, router.session_header) == (
        "vllm-router",
        "sticky_least_loaded",
        True,
        "X-Session-ID",
    )


def test_generate_spreads_new_sessions_and_finishes_them(fleet: Fleet) -> None:
    before, figures = _requests(fleet), _router_figures()
    out = fleet.generate([f"rollout {i}" for i in range(4)], max_tokens=2, concurrency=4)
    assert len(out.completions) == 4
    # Four sessions open at once: one to each engine, the least loaded.
    assert [a - b for a, b in zip(_requests(fleet), before)] == [1, 1, 1, 1]
    after = _router_figures()
    assert after["standin_router_finished_sessions_total"] - figures["standin_router_finished_sessions_total"] == 4
    assert after["standin_router_sticky_sessions"] == 0


def test_a_sessions_turns_stay_on_one_engine_until_it_is_finished(fleet: Fleet) -> None:
    before = _requests(fleet)
    with fleet.session() as sid:
        for turn in range(3):
            fleet.generate([f"turn {turn}"], session_ids=[sid], max_tokens=2)
        assert _router_figures()["standin_router_sticky_sessions"] == 1
    delta = [a - b for a, b in zip(_requests(fleet), before)]
    assert sorted(delta) == [0, 0, 0, 3]
    assert _router_figures()["standin_router_sticky_sessions"] == 0
