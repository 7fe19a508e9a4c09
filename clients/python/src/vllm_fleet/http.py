"""One HTTP client for every admin call, with the fleet's key and bounded timeouts."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, TypeVar

import httpx

from .engines import Call
from .errors import EngineResult

T = TypeVar("T")
R = TypeVar("R")


class Http:
    def __init__(self, api_key: str | None, timeout: float, max_workers: int):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(headers=headers, timeout=timeout)
        self.max_workers = max_workers

    def close(self) -> None:
        self.client.close()

    def request(self, method: str, url: str, *, json: Any = None, params: dict[str, str] | None = None, timeout: float | None = None) -> httpx.Response:
        kw: dict[str, Any] = {"params": params}
        if json is not None:
            kw["json"] = json
        if timeout is not None:
            kw["timeout"] = timeout
        return self.client.request(method, url, **kw)

    def call(self, root: str, call: Call, name: str, timeout: float | None = None) -> EngineResult:
        """One admin call; never raises: a transport error is a failed result naming the engine."""
        try:
            r = self.request(call.method, root + call.path, json=call.json, params=call.params, timeout=timeout)
        except httpx.HTTPError as e:
            return EngineResult(engine=name, ok=False, error=f"{call.method} {call.path}: {type(e).__name__}: {e}")
        body: Any
        try:
            body = r.json()
        except ValueError:
            body = r.text
        ok = 200 <= r.status_code < 300
        return EngineResult(
            engine=name,
            ok=ok,
            status=r.status_code,
            body=body,
            error=None if ok else f"{call.method} {call.path} answered {r.status_code}: {str(body)[:300]}",
        )

    def each(self, items: Iterable[T], fn: Callable[[T], R], max_workers: int | None = None) -> list[R]:
        """`fn` over every item at once (at most `max_workers` at a time), results in the items' order."""
        items = list(items)
        if not items:
            return []
        with ThreadPoolExecutor(max_workers=min(max_workers or self.max_workers, len(items))) as pool:
            return list(pool.map(fn, items))
