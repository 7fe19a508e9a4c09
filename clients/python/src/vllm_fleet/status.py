"""status() as `fleet status` reports a fleet known from its endpoints alone: READY when a process's
/health answers 200 and /v1/models lists the model (a router: when /v1/models through it lists it),
LAUNCHING otherwise. Each engine with a weight-version route (vLLM's /weight_info, SGLang's
/model_info) reports the version it serves; one that serves, but other weights than the fleet's
(the last version update_weights applied, else most of its island's engines), is RESTARTING: a
restarted engine comes back with the base weights, and the router's follower keeps it out until an
update reaches it (docs/restarts.md). An island whose router and some engines serve while others do
not is DEGRADED. Without the scheduler the client cannot tell a process still starting from one
that died, so it never says FAILED or SHUTDOWN; and where it could not observe serving at all (every
name unresolvable here, or the engines refusing its key) it raises instead of reporting a state."""

from __future__ import annotations

import socket
from dataclasses import dataclass

import httpx

from collections import Counter

from .endpoints import ServiceEndpoints, api_base
from .engines import admin_root, reported_version, routes_for
from .errors import FleetError
from .http import Http


@dataclass(frozen=True)
class ProcessStatus:
    id: str
    role: str
    url: str
    status: str
    detail: str
    weight_version: str | None = None
    """The weight version the engine reports (None: a router, or an engine that reports none)."""


@dataclass(frozen=True)
class IslandStatus:
    island: int
    status: str
    detail: str
    processes: tuple[ProcessStatus, ...]


@dataclass(frozen=True)
class FleetStatus:
    status: str
    """READY, DEGRADED or LAUNCHING (see the module's doc for why no other state is reported)."""
    detail: str
    islands: tuple[IslandStatus, ...]


@dataclass(frozen=True)
class _Probe:
    health: int | None
    models: int | None
    lists_model: bool
    error: str | None
    unresolved: bool


def _probe(http: Http, health_url: str | None, api: str, model: str) -> _Probe:
    health = models = None
    lists = False
    try:
        if health_url is not None:
            health = http.request("GET", health_url, timeout=10).status_code
        r = http.request("GET", api + "/models", timeout=10)
        models = r.status_code
        if r.status_code == 200:
            lists = any(m.get("id") == model for m in r.json().get("data", []))
    except httpx.ConnectError as e:
        unresolved = isinstance(e.__cause__, socket.gaierror) or "Name or service not known" in str(e) or "nodename nor servname" in str(e)
        return _Probe(health, models, False, f"{type(e).__name__}: {e}", unresolved)
    except (httpx.HTTPError, ValueError) as e:
        return _Probe(health, models, False, f"{type(e).__name__}: {e}", False)
    return _Probe(health, models, lists, None, False)


def _detail(p: _Probe) -> str:
    if p.error:
        return f"not answering ({p.error})"
    if p.health is not None and p.health != 200:
        return f"/health answers {p.health}"
    return "serving" if p.lists_model else "/v1/models does not list the model yet"


def _versions(http: Http, svc: ServiceEndpoints) -> dict[str, str | None]:
    """Each engine's reported weight version, by engine name (None where it gives none)."""
    call = routes_for(svc.engine).version
    if call is None:
        return {}
    got = http.each(svc.engines, lambda e: http.call(admin_root(svc.engine, e), call, e.name, timeout=10))
    return {r.engine: reported_version(svc.engine, r.body) if r.ok else None for r in got}


def _island_state(procs: list[ProcessStatus]) -> str:
    if all(p.status == "READY" for p in procs):
        return "READY"
    router_ok = all(p.status == "READY" for p in procs if p.role == "router")
    if router_ok and any(p.status == "READY" and p.role != "router" for p in procs):
        return "DEGRADED"
    return "LAUNCHING"


def status(http: Http, svc: ServiceEndpoints, key_from: str, expected_version: str | None = None) -> FleetStatus:
    """`expected_version`: the weight version the fleet last applied (Fleet.update_weights), if known."""
    jobs: list[tuple[int, str, str, str, str | None, str, str | None]] = []  # island, id, role, url, health url, api base, engine name
    for island in svc.islands:
        if island.router is not None:
            jobs.append((island.island, "router", "router", island.router.url, None, island.router.url, None))
        for e in island.engines:
            jobs.append((island.island, f"engine-{e.index}", e.role, e.admin_url, e.origin + "/health", api_base(svc.engine, e.admin_url), e.name))
    probes = http.each(jobs, lambda j: _probe(http, j[4], j[5], svc.model))

    if probes and all(p.unresolved for p in probes):
        raise FleetError(
            f"none of the fleet's names resolves from here ({jobs[0][3]}), so no state was observed; "
            "run this where the fleet's hosts resolve (on Kubernetes: in a pod of the cluster)"
        )
    refused = [j[3] for j, p in zip(jobs, probes) if p.models in (401, 403)]
    if refused:
        raise FleetError(
            f"{len(refused)} of {len(jobs)} endpoint(s) refused GET /v1/models ({refused[0]}{', ...' if len(refused) > 1 else ''}) "
            f"with the API key from {key_from}: whether the fleet serves was not observed. "
            "Give the fleet's key (api_key=, or VLLM_API_KEY=$(pulumi stack output apiKey --show-secrets))."
        )
    versions = _versions(http, svc)

    islands = []
    for island in svc.islands:
        rows = [(j, p) for j, p in zip(jobs, probes) if j[0] == island.island]
        ready = {j[1]: (p.lists_model if j[2] == "router" else (p.health == 200 and p.lists_model)) for j, p in rows}
        # The fleet's weights: the last version applied, else what most of this island's serving engines report.
        served = [versions.get(j[6]) for j, _ in rows if j[6] is not None and ready[j[1]] and versions.get(j[6]) is not None]
        fleet_version = expected_version or (Counter(served).most_common(1)[0][0] if served else None)
        procs = []
        for j, p in rows:
            v = versions.get(j[6]) if j[6] is not None else None
            if not ready[j[1]]:
                procs.append(ProcessStatus(id=j[1], role=j[2], url=j[3], status="LAUNCHING", detail=_detail(p), weight_version=v))
            elif v is not None and fleet_version is not None and v != fleet_version:
                detail = f"serves weight version {v}, the fleet's is {fleet_version}: kept out of the router until an update reaches it"
                procs.append(ProcessStatus(id=j[1], role=j[2], url=j[3], status="RESTARTING", detail=detail, weight_version=v))
            else:
                procs.append(ProcessStatus(id=j[1], role=j[2], url=j[3], status="READY", detail="serving", weight_version=v))
        n_ready = sum(p.status == "READY" for p in procs)
        islands.append(IslandStatus(island=island.island, status=_island_state(procs), detail=f"{n_ready} of {len(procs)} serving", processes=tuple(procs)))
    if all(i.status == "READY" for i in islands):
        overall = "READY"
    elif any(i.status in ("READY", "DEGRADED") for i in islands):
        overall = "DEGRADED"
    else:
        overall = "LAUNCHING"
    islands_ready = sum(i.status == "READY" for i in islands)
    return FleetStatus(status=overall, detail=f"{islands_ready} of {len(islands)} island(s) serving", islands=tuple(islands))
