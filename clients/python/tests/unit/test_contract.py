"""Reading the trainer contract: what the TypeScript program writes (schema/endpoints.schema.json,
vendored in the package) is accepted, what it refuses is refused naming the field, and services are
picked by name. No fleet needed."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from vllm_fleet import Fleet, FleetError
from vllm_fleet import endpoints as ep
from vllm_fleet.generate import as_requests, island_for, sampling

BLOCKS = {"primeRl": None, "nexrl": "", "verl": "", "openaiEnv": {}}


def island(k: int, router: bool = True, n: int = 2) -> dict:
    urls = [f"http://10.0.{k}.{i}:8100/v1" for i in range(n)]
    return {
        "island": k,
        "model": "tiny",
        "routerUrl": f"http://10.0.{k}.0:8000/v1" if router else None,
        "adminUrls": urls,
        "roles": ["replica"] * n,
        "engineCount": n,
        "trainers": BLOCKS,
    }


def contract(engine: str = "vllm", islands: list[dict] | None = None) -> dict:
    islands = islands if islands is not None else [island(0), island(1)]
    urls = [u for i in islands for u in i["adminUrls"]]
    return {
        "model": "tiny",
        "target": "slurm",
        "engine": engine,
        "baseUrls": [i["routerUrl"] or i["adminUrls"][0] for i in islands],
        "adminUrls": urls,
        "roles": ["replica"] * len(urls),
        "engineCount": len(urls),
        "apiKeyRequired": False,
        "islands": islands,
        "trainers": BLOCKS,
    }


def test_the_vendored_schema_is_the_programs() -> None:
    repo = Path(__file__).resolve().parents[4]
    published = repo / "schema" / "endpoints.schema.json"
    if not published.exists():
        pytest.skip(f"{published} is not here (the package was copied out of the repository)")
    vendored = Path(ep.__file__).with_name("endpoints.schema.json")
    assert vendored.read_bytes() == published.read_bytes(), "copy schema/endpoints.schema.json into clients/python/src/vllm_fleet/"


def test_engines_in_the_planners_order_with_their_roots() -> None:
    svc = ep.load(contract())
    assert [e.admin_url for e in svc.engines] == [u for i in contract()["islands"] for u in i["adminUrls"]]
    assert svc.engines[0].origin == "http://10.0.0.0:8100"
    assert svc.engines[3].name == "island 1 engine 1 (replica, http://10.0.1.1:8100/v1)"
    assert svc.islands[0].base_url == "http://10.0.0.0:8000/v1"
    assert svc.islands[0].router is not None and svc.islands[0].router.session_header == "X-Session-ID"


def test_a_router_less_sglang_island_is_addressed_at_its_engine() -> None:
    sg = contract("sglang", [island(0, router=False, n=1)])
    sg["islands"][0]["adminUrls"] = ["http://10.0.0.0:30000"]
    sg["adminUrls"] = ["http://10.0.0.0:30000"]
    svc = ep.load(sg)
    assert svc.islands[0].router is None and svc.islands[0].base_url == "http://10.0.0.0:30000/v1"
    assert ep.load(contract("vllm", [island(0, router=False, n=1)])).islands[0].base_url == "http://10.0.0.0:8100/v1"


def test_refusals_name_the_field(tmp_path: Path) -> None:
    bad = contract()
    del bad["islands"][1]["adminUrls"]
    with pytest.raises(FleetError, match=r"at islands/1: 'adminUrls' is a required property"):
        ep.load(bad, source="x.json")
    wrong = contract()
    wrong["engine"] = "trtllm"
    with pytest.raises(FleetError, match=r"at engine: 'trtllm' is not one of"):
        ep.load(wrong)
    f = tmp_path / "endpoints.json"
    f.write_text("{not json")
    with pytest.raises(FleetError, match=r"endpoints.json is not JSON"):
        ep.load(f)
    with pytest.raises(FleetError, match=r"no endpoints file at .*missing.json"):
        ep.load(tmp_path / "missing.json")


def test_services_are_picked_by_name() -> None:
    stack = {
        "target": "slurm",
        "apiKeyRequired": False,
        "engineCount": 8,
        "services": {"policy": contract(), "judge": contract("sglang")},
    }
    with pytest.raises(FleetError, match=r"several services \(policy, judge\): name one with service="):
        ep.load(stack)
    with pytest.raises(FleetError, match=r"no service 'critic'; its services: policy, judge"):
        ep.load(stack, service="critic")
    assert ep.load(stack, service="judge").engine == "sglang"


def test_a_key_the_fleet_requires_must_be_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    keyed = contract()
    keyed["apiKeyRequired"] = True
    with pytest.raises(FleetError, match=r"requires an API key"):
        Fleet.from_endpoints(keyed)
    monkeypatch.setenv("VLLM_API_KEY", "sk-x")
    Fleet.from_endpoints(copy.deepcopy(keyed)).close()


def test_prompt_shapes_as_seed_003_takes_them() -> None:
    assert as_requests("hi") == ("completion", ["hi"])
    assert as_requests(["a", "b"]) == ("completion", ["a", "b"])
    conv = [{"role": "user", "content": "hi"}]
    assert as_requests(conv) == ("chat", [conv])
    assert as_requests([conv, conv]) == ("chat", [conv, conv])
    with pytest.raises(FleetError, match="a prompt, a list of prompts"):
        as_requests([1, 2])  # type: ignore[list-item]


def test_do_sample_false_is_greedy_and_engines_get_their_own_fields() -> None:
    args, extra = sampling("vllm", 0.9, 0.5, 20, do_sample=False)
    assert args == {"temperature": 0.0, "top_p": 1.0} and "top_k" not in extra
    assert extra["return_tokens_as_token_ids"] and extra["include_stop_str_in_output"] and extra["skip_special_tokens"] is False
    _, sg = sampling("sglang", 1.0, 1.0, 20, do_sample=True)
    assert sg["top_k"] == 20 and sg["no_stop_trim"] and "return_tokens_as_token_ids" not in sg


def test_a_session_stays_on_one_island() -> None:
    svc = ep.load(contract())
    assert {island_for(svc, "trajectory-7").island for _ in range(5)} == {island_for(svc, "trajectory-7").island}
    assert {island_for(svc, f"s{i}").island for i in range(64)} == {0, 1}


def test_contract_from_stack_outputs_without_endpoints_is_refused() -> None:
    with pytest.raises(FleetError, match=r"stack dev exports no `endpoints` output \(outputs: planned\)"):
        Fleet._from_outputs("dev", {"planned": json.dumps({})}, None)


def test_the_package_is_typed_strictly() -> None:
    """mypy --strict over the installed package's sources (py.typed promises users checked types)."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null", "-p", "vllm_fleet"], capture_output=True, text=True, check=False, cwd="/")
    assert run.returncode == 0, run.stdout + run.stderr


def island_file(k: int, stack: str = "dev", router: dict | None = None) -> dict:
    """A running island's endpoints.json as a job writes it (schema/island.schema.json)."""
    addr = f"10.0.{k}.1"
    return {
        "format": "vllm-fleet/island/v1",
        "dryRun": False,
        "stack": stack,
        "island": k,
        "jobName": f"{stack}-i{k}",
        "jobId": str(100 + k),
        "adopted": False,
        "model": "tiny",
        "engine": "prime-rl",
        "nodes": [{"name": f"i{k}-n0", "host": f"node{k}", "addr": addr}],
        "routerUrl": f"http://{addr}:8000/v1",
        "router": router,
        "engines": [{"id": f"i{k}-e{r}", "role": "replica", "replica": 0, "url": f"http://{addr}:{8100 + r}/v1"} for r in range(2)],
        "adminUrls": [f"http://{addr}:{8100 + r}/v1" for r in range(2)],
        "roles": ["replica", "replica"],
        "mooncake": None,
        "timing": {"submittedAt": 1.0, "runningAt": 2.0, "readyAt": 3.0},
    }


def test_islands_endpoints_files_make_one_fleet() -> None:
    sticky = {"kind": "vllm-router", "policy": "sticky_least_loaded", "release": "primeintellect-v0.2.1", "finishSession": True, "sessionHeader": "X-Session-ID"}
    svc = ep.load([island_file(1, router=sticky), island_file(0)])
    assert [i.island for i in svc.islands] == [0, 1]
    assert svc.engine == "prime-rl" and svc.api_key_required is None and svc.target is None
    assert len(svc.engines) == 4
    assert svc.islands[1].router is not None and svc.islands[1].router.finish_session
    assert svc.islands[0].router is not None and not svc.islands[0].router.finish_session  # a file from before the router entry


def test_islands_of_two_stacks_or_twice_the_same_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FleetError, match=r"of stack 'prod'.*one fleet's islands only"):
        ep.load([island_file(0), island_file(1, stack="prod")])
    with pytest.raises(FleetError, match="an island is given twice"):
        ep.load([island_file(0), island_file(0)])
    half = island_file(0)
    del half["adminUrls"]
    with pytest.raises(FleetError, match=r"is not a running island's endpoints.json: at \(top level\): 'adminUrls' is a required property"):
        ep.load(half)
    f = tmp_path / "endpoints.json"
    f.write_text(json.dumps(contract()))
    with pytest.raises(FleetError, match="is not an island's endpoints.json"):
        ep.load([f, island_file(0)])
