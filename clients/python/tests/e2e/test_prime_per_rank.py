"""Against prime-rl's per-rank topology on the SLURM test cluster: stand-in prime-rl servers (one
process per DP rank, 2 ranks on each of 2 nodes; real GPU engines cannot run here) behind the real
vllm-router. Deployed by test/e2e/python-client.e2e.test.ts."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from vllm_fleet import FanOutError, Fleet, WeightMismatch


def _state(fleet: Fleet) -> list[dict]:
    # /standin/state is the stand-in's own window for tests, not a route the client uses.
    return [httpx.get(e.origin + "/standin/state", timeout=10).json() for e in fleet.endpoints.engines]


def _local_ips(proc: Path) -> set[str]:
    """The IPv4 addresses the process's network namespace holds (its node's, on the test cluster)."""
    lines = (proc / "net" / "fib_trie").read_text().splitlines()
    return {lines[i].split()[-1] for i in range(len(lines) - 1) if "|--" in lines[i] and "/32 host LOCAL" in lines[i + 1]}


def _listener_pid(url: str) -> int:
    """The process listening on the engine's address. The test cluster's nodes are network namespaces
    of this machine, so each process's /proc/<pid>/net is its own node's: the one whose namespace holds
    the engine's IP and that listens on its port (on 0.0.0.0, as the engines bind)."""
    parts = urlsplit(url)
    ip = socket.gethostbyname(parts.hostname or "")
    want_port = f"{parts.port:04X}"
    want_ips = {"".join(f"{int(o):02X}" for o in reversed(ip.split("."))), "00000000"}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            table = [line.split() for line in (proc / "net" / "tcp").read_text().splitlines()[1:]]
            inodes = {f[9] for f in table if f[3] == "0A" and f[1].split(":")[1] == want_port and f[1].split(":")[0] in want_ips}
            if not inodes or ip not in _local_ips(proc):
                continue
            for fd in (proc / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    return int(proc.name)
        except (OSError, IndexError):
            continue
    raise AssertionError(f"no process listens on {ip}:{parts.port}")


def test_contract_lists_every_rank(fleet: Fleet) -> None:
    e = fleet.endpoints
    assert e.engine == "prime-rl"
    ports = sorted(urlsplit(x.admin_url).port for x in e.engines)
    assert len(e.engines) == 4 and ports == [8100, 8100, 8101, 8101]


def test_update_reaches_every_rank_and_the_probe_ledger_agrees(fleet: Fleet) -> None:
    weights = Path(os.environ["FLEET_CLIENT_WEIGHTS"])
    before = _state(fleet)
    fleet.pause()
    fleet.update_weights(str(weights / "v1"), version=1)
    ledger = fleet.resume()["ledger"]
    after = _state(fleet)
    for b, a in zip(before, after):
        assert a["weight_dir"] == str(weights / "v1")
        assert a["weight_updates"] == b["weight_updates"] + 1
        assert a["pauses"] == b["pauses"] + 1 and a["resumes"] == b["resumes"] + 1
        assert a["paused"] is False
    assert ledger["method"] == "greedy probe" and len(ledger["engines"]) == 4
    probes = {tuple(v["probe"]) for v in ledger["engines"].values()}
    assert len(probes) == 1 and len(next(iter(probes))) == 8


def test_the_ledger_names_a_rank_left_on_other_weights(fleet: Fleet) -> None:
    weights = Path(os.environ["FLEET_CLIENT_WEIGHTS"])
    fleet.update_weights(str(weights / "v1"))
    behind = fleet.endpoints.engines[2]
    # One rank loads other weights behind the client's back.
    httpx.post(behind.origin + "/update_weights", json={"weight_dir": str(weights / "v2")}, timeout=30).raise_for_status()
    with pytest.raises(WeightMismatch) as mismatch:
        fleet.verify_weights()
    assert mismatch.value.differing == [behind.name]
    fleet.update_weights(str(weights / "v2"))  # all on v2 again: agreement
    assert fleet.verify_weights()["method"] == "greedy probe"


def test_a_lora_adapter_reaches_every_rank(fleet: Fleet) -> None:
    weights = Path(os.environ["FLEET_CLIENT_WEIGHTS"])
    results = fleet.load_lora_adapter("judge-adapter", str(weights / "v1"))
    assert [r.ok for r in results] == [True] * 4
    assert all(s["loras"] == {"judge-adapter": str(weights / "v1")} for s in _state(fleet))
    out = fleet.generate("with the adapter", max_tokens=3, model="judge-adapter")
    assert len(out.token_ids[0]) == 3


def test_generate_through_the_router_with_session_stickiness(fleet: Fleet) -> None:
    with fleet.session() as sid:
        first = fleet.generate(["turn one"], session_ids=[sid], max_tokens=4)
        second = fleet.generate(["turn two"], session_ids=[sid], max_tokens=4)
    assert first.metadata[0]["session_id"] == second.metadata[0]["session_id"] == sid
    counts = [s["requests"] for s in _state(fleet)]
    out = fleet.generate([f"prompt {i}" for i in range(12)], max_tokens=2, concurrency=4)
    assert len(out.completions) == 12 and all(len(t) == 2 for t in out.token_ids)
    assert sum(s["requests"] for s in _state(fleet)) - sum(counts) == 12


def test_a_rank_killed_mid_fan_out_fails_the_call_naming_it_and_the_others_resume(fleet: Fleet) -> None:
    weights = Path(os.environ["FLEET_CLIENT_WEIGHTS"])
    victim = fleet.endpoints.engines[1]
    pid = _listener_pid(victim.admin_url)
    fleet.pause()
    os.kill(pid, signal.SIGKILL)
    started = time.monotonic()
    with pytest.raises(FanOutError) as failed:
        fleet.update_weights(str(weights / "v1"))
    err = failed.value
    failing = [r.engine for r in err.results if not r.ok]
    assert victim.name in failing, str(err)
    assert victim.name in str(err)
    # The job takes a dead rank's node down with it (its step ends), so the victim's neighbour may be
    # gone too: every rank still alive answered its resume, and each rank not resumed is gone.
    assert err.resumed, str(err)
    assert {r.engine for r in err.not_resumed} | set(err.resumed) == {e.name for e in fleet.endpoints.engines}
    for e in fleet.endpoints.engines:
        try:
            state = httpx.get(e.origin + "/standin/state", timeout=5).json()
        except httpx.HTTPError:
            continue  # gone since: the job is tearing down after its dead rank
        assert state["paused"] is False, f"{e.name} left paused: {err}"
    assert victim.name in {r.engine for r in err.not_resumed}, f"{err} (after {time.monotonic() - started:.3f} s)"
