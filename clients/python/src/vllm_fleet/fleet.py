"""Fleet: one service of a vllm-fleet stack, as a trainer drives it."""

from __future__ import annotations

import os
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import httpx
import openai

from . import endpoints as ep
from . import generate as gen
from . import ledger, membership, weights_record
from . import metrics as met
from . import stack as pulumi_stack
from . import status as st
from .engines import Call, admin_root, routes_for
from .errors import EngineResult, FanOutError, FleetError
from .http import Http


class Fleet:
    """A service's engines and routers, from its `endpoints` contract.

    Admin calls (pause, resume, update_weights, load_lora_adapter) go to every engine process at
    once, never to a router; generate() goes through the routers. While weights change (from pause()
    to resume(), or during an update_weights() that paused by itself) generate() waits."""

    def __init__(
        self,
        contract: ep.ServiceEndpoints,
        api_key: str | None = None,
        *,
        key_from: str = "the caller",
        timeout: float = 600.0,
        concurrency: int = 64,
        admin_timeout: float = 900.0,
    ):
        self.endpoints = contract
        if api_key is None and "VLLM_API_KEY" in os.environ:
            api_key, key_from = os.environ["VLLM_API_KEY"], "VLLM_API_KEY"
        if contract.api_key_required and not api_key:
            raise FleetError("the fleet requires an API key: pass api_key=, or export VLLM_API_KEY=$(pulumi stack output apiKey --show-secrets)")
        self._key_from = key_from if api_key else "nowhere (no key given)"
        self._http = Http(api_key, timeout=admin_timeout, max_workers=concurrency)
        # The SDK refuses to start without a key; engines without one ignore it.
        self._openai = openai.OpenAI(base_url=contract.islands[0].base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=2)
        self._serving = threading.Event()
        # The weight version the last update_weights applied: status() names engines serving other weights.
        self._applied_version: str | None = None
        self._serving.set()
        self._admin = threading.Lock()
        self._paused_at: membership.Membership | None = None
        # The version an update loaded while paused, checked by the ledger once the engines serve again.
        self._pending_version: tuple[str | None] | None = None
        # Engines an update found restarting and left to their islands' weights records: until the
        # update's resume, admin calls and the ledger skip them.
        self._catching_up: frozenset[str] = frozenset()

    # ----- construction -----

    @classmethod
    def from_endpoints(cls, endpoints: ep.Source | list[ep.Source], *, service: str | None = None, api_key: str | None = None, **kw: Any) -> "Fleet":
        """From the `endpoints` output (a dict, or a file of `pulumi stack output --json endpoints`), or the
        endpoints.json each island's job writes beside it (`<output_dir>/island-<k>/endpoints.json`; a
        list of them for a fleet of several islands)."""
        return cls(ep.load(endpoints, service=service), api_key, key_from="api_key=" if api_key else "the caller", **kw)

    @classmethod
    def from_stack(cls, stack: str, *, service: str | None = None, work_dir: str | Path | None = None, via: str = "cli", **kw: Any) -> "Fleet":
        """From a stack's outputs: `endpoints`, and the secret `apiKey` when the fleet has one."""
        if via not in ("cli", "automation"):
            raise FleetError(f"via must be 'cli' or 'automation', not {via!r}")
        outs = pulumi_stack.outputs_via_cli(stack, work_dir) if via == "cli" else pulumi_stack.outputs_via_automation(stack, work_dir)
        return cls._from_outputs(stack, outs, service, **kw)

    @classmethod
    def _from_outputs(cls, stack: str, outs: Mapping[str, Any], service: str | None, **kw: Any) -> "Fleet":
        if "endpoints" not in outs:
            raise FleetError(f"stack {stack} exports no `endpoints` output (outputs: {', '.join(sorted(outs)) or 'none'}); is it a vllm-fleet stack, and is it up?")
        contract = ep.load(outs["endpoints"], service=service, source=f"stack {stack}'s endpoints output")
        key = outs.get("apiKey")
        return cls(contract, key, key_from=f"stack {stack}'s apiKey output" if key else "the caller", **kw)

    @classmethod
    def up(cls, stack: str, *, service: str | None = None, work_dir: str | Path | None = None, on_output: Callable[[str], None] | None = print, **kw: Any) -> "Fleet":
        """`pulumi up` of the stack through the Automation API; returns the fleet it made."""
        return cls._from_outputs(stack, pulumi_stack.up(stack, work_dir, on_output), service, **kw)

    @staticmethod
    def destroy(stack: str, *, work_dir: str | Path | None = None, on_output: Callable[[str], None] | None = print) -> None:
        """`pulumi destroy` of the stack through the Automation API: every GPU given back."""
        pulumi_stack.destroy(stack, work_dir, on_output)

    @staticmethod
    def keep(
        stack: str,
        *,
        work_dir: str | Path | None = None,
        every: int = 60,
        max_ups: int = 3,
        window: int = 3600,
        once: bool = False,
        on_output: Callable[[str], None] | None = print,
    ) -> None:
        """For the hours nobody watches: the project's `fleet keep <stack>` (docs/fleet-cli.md), which checks
        the fleet every `every` seconds and runs `pulumi up` when an island's job or run is gone, at most
        `max_ups` ups within `window` seconds. Returns when stopped or after a `once` round that ended
        well; raises FleetError when it gives up (or a `once` round failed), with its last lines."""
        pulumi_stack.keep(stack, work_dir, every=every, max_ups=max_ups, window=window, once=once, on_output=on_output)

    @staticmethod
    def cost(stack: str, *, service: str | None = None, work_dir: str | Path | None = None, partial: bool = False) -> dict[str, Any]:
        """The GPU-hours each island has held, in all and since the last up, split into busy / idle /
        paused / unseen / unrecorded by its activity ledger and priced by `cost.gpu_hour_price`: the
        project's `fleet cost <stack> --json` (docs/fleet-cli.md) run in `work_dir`, its report as a dict
        (`total`, `sinceUp`, `islands[].jobs`). Raises FleetError when the scheduler did not answer, or
        (unless `partial`) when some job's time was not seen."""
        return pulumi_stack.cost(stack, work_dir, service=service, partial=partial)

    @staticmethod
    def wake(stack: str, *, service: str | None = None, work_dir: str | Path | None = None) -> list[dict[str, Any]]:
        """Kubernetes: brings back the islands whose activity monitor released them after
        `idle_release_after` (their engine workloads scaled back to their planned replicas, the release
        mark cleared): the project's `fleet wake <stack> --json` (docs/fleet-cli.md) run in `work_dir`;
        the islands it woke (`island`, `detail`). Raises FleetError when the API server did not answer
        or the stack is not on Kubernetes (there `pulumi up` starts a released island again)."""
        return pulumi_stack.wake(stack, work_dir, service=service)

    def close(self) -> None:
        self._http.close()
        self._openai.close()

    def __enter__(self) -> "Fleet":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ----- observing -----

    def status(self) -> st.FleetStatus:
        """Per process READY / RESTARTING / LAUNCHING and each engine's weight version; per island and fleet
        READY / DEGRADED / LAUNCHING (vllm_fleet.status). An engine serving other weights than the last
        version this Fleet applied is RESTARTING."""
        return st.status(self._http, self.endpoints, self._key_from, self._applied_version)

    def metrics(self) -> dict[str, Any]:
        return met.metrics(self._http, self.endpoints)

    def wait_until_ready(self, timeout: float = 1800.0, interval: float = 2.0) -> st.FleetStatus:
        """Polls status() until READY; raises FleetError naming what does not serve when `timeout` runs out."""
        deadline = time.monotonic() + timeout
        while True:
            s = self.status()
            if s.status == "READY":
                return s
            if time.monotonic() >= deadline:
                waiting = [f"island {i.island} {p.id} ({p.url}): {p.detail}" for i in s.islands for p in i.processes if p.status != "READY"]
                raise FleetError(f"the fleet is not ready after {timeout:g} s ({s.detail}):\n" + "\n".join(f"  {w}" for w in waiting))
            time.sleep(interval)

    # ----- generating -----

    def generate(
        self,
        prompts: gen.Prompts,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = -1,
        max_tokens: int = 512,
        do_sample: bool = True,
        *,
        logprobs: bool = True,
        session_ids: list[str] | None = None,
        concurrency: int | None = None,
        model: str | None = None,
        wait_timeout: float | None = None,
    ) -> gen.GenerationOutput:
        """generate() as a VERL + SGLang InferenceEngine wrapper offers it: a prompt, prompts, a conversation or conversations; returns completions,
        token_ids and metadata (with NexRL's nexrl_train fields). Each prompt is a session (its own id, or
        the one given) sent with the router's session header; sessions the client opened are finished on
        routers that serve /finish_session. Waits while weights change."""
        kind, items = gen.as_requests(prompts)
        if session_ids is not None and len(session_ids) != len(items):
            raise FleetError(f"session_ids has {len(session_ids)} ids for {len(items)} prompts")
        own = session_ids is None
        sids = session_ids or [gen.new_session_id() for _ in items]
        args, extra = gen.sampling(self.endpoints.engine, temperature, top_p, top_k, do_sample)
        if not self._serving.wait(wait_timeout):
            raise FleetError(f"weights were still changing after {wait_timeout} s; nothing was sent")
        name = model or self.endpoints.model
        try:
            results = self._http.each(
                list(zip(items, sids)),
                lambda p: gen.one(self._openai, self.endpoints, kind, p[0], p[1], args, extra, max_tokens, logprobs, name),
                max_workers=concurrency,
            )
        finally:
            if own:
                for sid in sids:
                    self.finish_session(sid)
        return gen.assemble(results)

    @contextmanager
    def session(self, session_id: str | None = None) -> Iterator[str]:
        """A multi-turn session: pass the id as generate(..., session_ids=[sid]) each turn; finished on exit."""
        sid = session_id or gen.new_session_id()
        try:
            yield sid
        finally:
            self.finish_session(sid)

    def finish_session(self, session_id: str) -> bool:
        """Tells the session's router it ended (prime-rl's router with sticky_least_loaded frees its slot).
        Returns whether a router was told; routers without /finish_session are not called."""
        island = gen.island_for(self.endpoints, session_id)
        if island.router is None or not island.router.finish_session:
            return False
        try:
            r = self._http.request("POST", island.router.origin + "/finish_session", params={"session_id": session_id}, timeout=10)
        except httpx.HTTPError as e:
            raise FleetError(f"island {island.island}'s router did not take /finish_session for {session_id}: {e}") from None
        if r.status_code >= 300:
            raise FleetError(f"island {island.island}'s router answered /finish_session with {r.status_code}: {r.text[:200]}")
        return True

    # ----- changing weights -----

    def _fan(self, operation: str, calls: Callable[[ep.Engine], list[Call]], timeout: float | None = None) -> list[EngineResult]:
        kind = self.endpoints.engine

        def run(e: ep.Engine) -> EngineResult:
            result = EngineResult(engine=e.name, ok=True)
            for c in calls(e):
                result = self._http.call(admin_root(kind, e), c, e.name, timeout=timeout)
                if not result.ok:
                    break
            return result

        return self._http.each([e for e in self.endpoints.engines if e.name not in self._catching_up], run)

    def _snapshot(self, operation: str, record: bool = False) -> membership.Membership:
        """Which engines serve; raises naming those that do not, unless `record` (an update with a
        version) and each of them belongs to an island with a weights record: an engine that
        restarts then catches up from the record before its router is told it (docs/restarts.md),
        and the call leaves it out (self._catching_up)."""
        snap = membership.snapshot(self._http, self.endpoints)
        recordable = {e.name for i in self.endpoints.islands if i.weights_record is not None for e in i.engines}
        if snap.down and record and set(snap.down) <= recordable and snap.serving:
            self._catching_up = frozenset(snap.down)
            return snap
        if snap.down:
            raise FanOutError(
                operation,
                [EngineResult(engine=n, ok=False, error=f"not serving before the call: {why}") for n, why in snap.down.items()],
                reason=f"{len(snap.down)} engine(s) were not serving, so nothing was sent",
            )
        return snap

    def _resume_all(self) -> tuple[list[str], list[EngineResult]]:
        routes = routes_for(self.endpoints.engine)
        done = self._fan("resume", lambda e: [routes.resume], timeout=60)
        return [r.engine for r in done if r.ok], [r for r in done if not r.ok]

    def _fail(self, operation: str, results: list[EngineResult], reason: str = "") -> FanOutError:
        """Resumes every engine (none is left paused by a failed call), reopens generate(), and builds the error."""
        resumed, not_resumed = self._resume_all()
        self._catching_up = frozenset()
        self._paused_at = None
        self._pending_version = None
        self._serving.set()
        return FanOutError(operation, results, reason=reason, resumed=resumed, not_resumed=not_resumed)

    def _check_members(self, operation: str, before: membership.Membership, results: list[EngineResult]) -> None:
        skipped = [e for e in self.endpoints.engines if e.name in self._catching_up]
        moved = membership.changes(before, membership.snapshot(self._http, self.endpoints), skipped)
        if moved:
            raise self._fail(operation, results, reason="the fleet's membership changed during the call: " + "; ".join(moved))

    def pause(self) -> list[EngineResult]:
        """Pauses every engine (requests in flight wait inside the engines) and holds new generate() calls."""
        with self._admin:
            before = self._snapshot("pause")
            self._serving.clear()
            routes = routes_for(self.endpoints.engine)
            results = self._fan("pause", lambda e: [routes.pause])
            if not all(r.ok for r in results):
                raise self._fail("pause", results)
            self._check_members("pause", before, results)
            self._paused_at = before
            return results

    def resume(self) -> dict[str, Any]:
        """Resumes every engine; then, if weights changed while paused, checks the ledger before letting
        generate() through (the greedy probe needs serving engines). Returns {"results", "ledger"};
        raises FanOutError naming engines still paused, or WeightMismatch naming engines that differ
        (every engine resumed either way)."""
        with self._admin:
            routes = routes_for(self.endpoints.engine)
            results = self._fan("resume", lambda e: [routes.resume], timeout=60)
            self._paused_at = None
            try:
                if not all(r.ok for r in results):
                    raise FanOutError("resume", results)
                return {"results": results, "ledger": self._verify_pending()}
            finally:
                self._catching_up = frozenset()
                self._serving.set()

    def _verify_pending(self) -> dict[str, Any] | None:
        pending, self._pending_version = self._pending_version, None
        if pending is None:
            return None
        # Engines catching up from the record are not serving yet; the ledger checks the others.
        return ledger.check(self._http, ep.without(self.endpoints, self._catching_up), pending[0])

    def update_weights(self, weight_dir: str, *, version: str | int | None = None, verify: bool = True) -> dict[str, Any]:
        """Loads new weights on every engine from `weight_dir` (a folder every engine reads).

        Between pause() and resume() the engines stay paused and resume() checks the ledger; called
        alone, it pauses, updates, resumes and checks by itself. The ledger: every engine serves the
        same weights (and reports `version` where it reports one). Any failure resumes every engine
        and names the engines concerned. With a `version`, the update is also recorded in each
        island's folder where the fleet was read from its endpoints.json files (an engine that
        restarts loads it before it serves again), and an engine found not serving (restarting) in
        an island with a record does not fail the call: the others are updated, and it loads the
        recorded update before its router is told it again. Returns {"results", "ledger",
        "recorded", "catching_up"} (ledger None until resume(), and over the serving engines;
        recorded: the weights records written; catching_up: the engines left to the record)."""
        v = None if version is None else str(version)
        with self._admin:
            own_pause = self._paused_at is None
            routes = routes_for(self.endpoints.engine)
            if own_pause:
                before = self._snapshot("update_weights", record=v is not None)
                catching_up = sorted(self._catching_up)
                self._serving.clear()
                paused = self._fan("pause", lambda e: [routes.pause])
                if not all(r.ok for r in paused):
                    raise self._fail("update_weights (pausing)", paused)
            else:
                assert self._paused_at is not None
                before = self._paused_at
                catching_up = []
            results = self._fan("update_weights", lambda e: routes.update_weights(weight_dir, v))
            if not all(r.ok for r in results):
                raise self._fail("update_weights", results)
            self._check_members("update_weights", before, results)
            self._pending_version = (v,) if verify else None
            recorded = self._record_weights(v, routes.update_weights(weight_dir, v)) if v is not None else []
            if v is not None:
                self._applied_version = v
        if not own_pause:
            return {"results": results, "ledger": None, "recorded": recorded, "catching_up": catching_up}
        return {"results": results, "ledger": self.resume()["ledger"], "recorded": recorded, "catching_up": catching_up}

    def _record_weights(self, version: str, calls: list[Call]) -> list[str]:
        """The update's calls, into each island's weights record where its folder is known (islands
        read from their endpoints.json): an engine that restarts loads them before it serves again.
        A record that cannot be written warns (the engines were updated; a restarted one then stays
        out of its router until the next update). Returns the records written."""
        written = []
        for island in self.endpoints.islands:
            if island.weights_record is None:
                continue
            try:
                weights_record.write(
                    island.weights_record, version, calls, model=island.model, engine=self.endpoints.engine
                )
                written.append(str(island.weights_record))
            except OSError as e:
                warnings.warn(
                    f"island {island.island}: could not write the weights record {island.weights_record} ({e}); "
                    "an engine of it that restarts stays out of its router until the next update_weights",
                    stacklevel=3,
                )
        return written

    def verify_weights(self, version: str | int | None = None) -> dict[str, Any]:
        """The weight ledger alone: raises WeightMismatch naming the engines that differ."""
        return ledger.check(self._http, self.endpoints, None if version is None else str(version))

    def load_lora_adapter(self, name: str, path: str) -> list[EngineResult]:
        """Loads (or replaces) a LoRA adapter on every engine; a failure names the engines that refused."""
        with self._admin:
            routes = routes_for(self.endpoints.engine)
            before = self._snapshot("load_lora_adapter")
            results = self._fan("load_lora_adapter", lambda e: [routes.lora(name, path)])
            if not all(r.ok for r in results):
                raise FanOutError("load_lora_adapter", results)
            moved = membership.changes(before, membership.snapshot(self._http, self.endpoints))
            if moved:
                raise FanOutError("load_lora_adapter", results, reason="the fleet's membership changed during the call: " + "; ".join(moved))
            return results
