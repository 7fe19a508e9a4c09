"""status() as `fleet status` reports a fleet known from its endpoints alone: READY when a process's
/health answers 200 and /v1/models lists the model (a router: when /v1/models through it lists it),
LAUNCHING otherwise. Without the scheduler the client cannot tell a process still starting from one
that died, so it never says FAILED or SHUTDOWN; and where it could not observe serving at all (every
name unresolvable here, or the engines refusing its key) it raises instead of reporting a state."""

from __future__ import annotations

import socket
from dataclasses import dataclass

import httpx

from .endpoints import ServiceEndpoints, api_base
from .errors import FleetError
from .http import Http


@dataclass(frozen=True)
class ProcessStatus:
    id: str
    role: str
    url: str
    status: str
    detail: str


@dataclass(frozen=True)
class IslandStatus:
    island: int
    status: str
    detail: str
    processes: tuple[ProcessStatus, ...]


@dataclass(frozen=True)
class FleetStatus:
    status: str
    """READY or LAUNCHING (see the module's doc for why no other state is reported)."""
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


def status(http: Http, svc: ServiceEndpoints, key_from: str) -> FleetStatus:
    jobs: list[tuple[int, str, str, str, str | None, str]] = []  # island, id, role, url, health url, api base
    for island in svc.islands:
        if island.router is not None:
            jobs.append((island.island, "router", "router", island.router.url, None, island.router.url))
        for e in island.engines:
            jobs.append((island.island, f"engine-{e.index}", e.role, e.admin_url, e.origin + "/health", api_base(svc.engine, e.admin_url)))
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

    islands = []
    for island in svc.islands:
        procs = []
        for j, p in zip(jobs, probes):
            if j[0] != island.island:
                continue
            ready = p.lists_model if j[2] == "router" else (p.health == 200 and p.lists_model)
            procs.append(ProcessStatus(id=j[1], role=j[2], url=j[3], status="READY" if ready else "LAUNCHING", detail="serving" if ready else _detail(p)))
        n_ready = sum(p.status == "READY" for p in procs)
        st = "READY" if n_ready == len(procs) else "LAUNCHING"
        islands.append(IslandStatus(island=island.island, status=st, detail=f"{n_ready} of {len(procs)} serving", processes=tuple(procs)))
    overall = "READY" if all(i.status == "READY" for i in islands) else "LAUNCHING"
    islands_ready = sum(i.status == "READY" for i in islands)
    return FleetStatus(status=overall, detail=f"{islands_ready} of {len(islands)} island(s) serving", islands=tuple(islands))
