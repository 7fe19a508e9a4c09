"""The membership snapshot a fanned-out call takes first: which engines serve, and which workers each
router routes to. The same check after the call tells whether an engine appeared or disappeared
meanwhile; such a call did not reach the fleet that exists now, so it fails naming the engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import httpx

from .endpoints import Engine, ServiceEndpoints
from .engines import admin_root, routes_for
from .http import Http


@dataclass(frozen=True)
class Membership:
    serving: frozenset[str]
    """Names of the engines whose liveness route answered 200 (EngineRoutes.alive)."""
    down: dict[str, str]
    """Engines that did not, with what they answered."""
    router_workers: dict[int, frozenset[str]]
    """Per island, the workers its router lists (vllm-router's /list_workers); absent where it lists none."""


def _alive(http: Http, root: str, kind: str) -> str | None:
    call = routes_for(kind).alive
    try:
        r = http.request(call.method, root + call.path, timeout=10)
    except httpx.HTTPError as e:
        return f"{type(e).__name__}: {e}"
    return None if r.status_code == 200 else f"{call.path} answered {r.status_code}"


def _router_workers(http: Http, origin: str) -> frozenset[str] | None:
    try:
        r = http.request("GET", origin + "/list_workers", timeout=10)
        if r.status_code != 200:
            return None
        urls = r.json().get("urls")
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return frozenset(u.rstrip("/") for u in urls) if isinstance(urls, list) else None


def snapshot(http: Http, svc: ServiceEndpoints) -> Membership:
    engines = svc.engines
    health = http.each(engines, lambda e: _alive(http, admin_root(svc.engine, e), svc.engine))
    workers: dict[int, frozenset[str]] = {}
    for island in svc.islands:
        if island.router is not None and island.router.kind in (None, "vllm-router"):
            listed = _router_workers(http, island.router.origin)
            if listed is not None:
                workers[island.island] = listed
    return Membership(
        serving=frozenset(e.name for e, h in zip(engines, health) if h is None),
        down={e.name: h for e, h in zip(engines, health) if h is not None},
        router_workers=workers,
    )


def changes(before: Membership, after: Membership, skipped: Sequence[Engine] = ()) -> list[str]:
    """What differs, one line per engine or router worker, naming it; `skipped` engines (left to
    their weights record while they restart) may come and go, and their routers' workers with them."""
    names = {e.name for e in skipped}
    origins = {e.origin for e in skipped}
    out = [f"{name} stopped serving during the call ({after.down.get(name, 'no answer')})" for name in sorted(before.serving - after.serving - names)]
    out += [f"{name} started serving during the call" for name in sorted(after.serving - before.serving - names)]
    for island, listed in before.router_workers.items():
        now = after.router_workers.get(island)
        if now is None:
            continue
        out += [f"island {island}'s router gained worker {w} during the call" for w in sorted(now - listed - origins)]
        out += [f"island {island}'s router lost worker {w} during the call" for w in sorted(listed - now - origins)]
    return out
