"""Each engine's own admin routes: where a pause, a resume, a weight update, a LoRA load and a
weight report go on one engine process. Never a router's: vllm-router passes a path it does not know
to ONE worker (docs/trainer.md), so an admin call through it reaches one engine and reports 200."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import facts
from .endpoints import Engine


@dataclass(frozen=True)
class Call:
    """One HTTP request to one engine."""

    method: str
    path: str
    """Relative to the engine's admin root (scheme://host:port)."""
    json: Any = None
    params: dict[str, str] | None = None


@dataclass(frozen=True)
class EngineRoutes:
    """What one kind of engine serves. A None route is one that engine lacks."""

    kind: str
    alive: Call
    """Whether the engine process is there, also while paused (the membership snapshot)."""
    pause: Call
    resume: Call
    lora_path: str
    """Where LoRA adapters are loaded (the body is the same everywhere: lora_name, lora_path)."""
    version: Call | None
    """The engine's own report of the weight version it serves, or None (the ledger then probes)."""
    checksum: Call | None
    """The engine's own checksum of its weights, or None."""

    def update_weights(self, weight_dir: str, version: str | None) -> list[Call]:
        raise NotImplementedError

    def lora(self, name: str, path: str) -> Call:
        return Call("POST", self.lora_path, {"lora_name": name, "lora_path": path, **self._lora_extra()})

    def _lora_extra(self) -> dict[str, Any]:
        return {}


class VllmRoutes(EngineRoutes):
    """`vllm serve` 0.32 with VLLM_SERVER_DEV_MODE=1 (vllm/entrypoints/rl/online/api_router.py and
    serve/dev/rpc/api_router.py): without dev mode these routes answer 404."""

    def update_weights(self, weight_dir: str, version: str | None) -> list[Call]:
        # In place from a checkpoint folder every engine can read (the worker's reload_weights), then
        # the label the engine reports on /weight_info.
        calls = [Call("POST", "/collective_rpc", {"method": "reload_weights", "kwargs": {"weights_path": weight_dir}})]
        if version is not None:
            calls.append(Call("POST", "/update_weight_version", {"new_version": version}))
        return calls

    def _lora_extra(self) -> dict[str, Any]:
        return {"load_inplace": True}  # a new version of an adapter replaces the old one, as prime-rl does


class PrimeRlRoutes(EngineRoutes):
    """prime-rl's server around vLLM (prime_rl/inference/vllm/server.py): what its orchestrator posts."""

    def update_weights(self, weight_dir: str, version: str | None) -> list[Call]:
        return [Call("POST", "/update_weights", {"weight_dir": weight_dir})]


class SglangRoutes(EngineRoutes):
    """`python -m sglang.launch_server` 0.5.23 (python/sglang/srt/entrypoints/http_server.py)."""

    def update_weights(self, weight_dir: str, version: str | None) -> list[Call]:
        body: dict[str, Any] = {"model_path": weight_dir}
        if version is not None:
            body["weight_version"] = version
        return [Call("POST", "/update_weights_from_disk", body)]


ROUTES: dict[str, EngineRoutes] = {
    "vllm": VllmRoutes(
        kind="vllm",
        alive=Call("GET", "/health"),  # the engine core's liveness; answers while paused
        # "keep": requests in flight stay queued and continue on /resume (the default "abort" drops them).
        pause=Call("POST", "/pause", params={"mode": "keep"}),
        resume=Call("POST", "/resume"),
        lora_path="/v1/load_lora_adapter",
        version=Call("GET", facts.routes("vllm")["weightVersion"]),
        checksum=Call("POST", "/weight_checker", {"action": "checksum"}),
    ),
    "prime-rl": PrimeRlRoutes(
        kind="prime-rl",
        alive=Call("GET", "/health"),
        pause=Call("POST", "/pause"),
        resume=Call("POST", "/resume"),
        lora_path="/load_lora_adapter",
        version=None,
        checksum=None,
    ),
    "sglang": SglangRoutes(
        kind="sglang",
        # Not /health: it generates a token, so it hangs while generation is paused; /ready answers 503 then.
        alive=Call("GET", "/model_info"),
        # "retract": running requests go back to the queue and are recomputed with the new weights.
        pause=Call("POST", "/pause_generation", {"mode": "retract"}),
        resume=Call("POST", "/continue_generation", {}),
        lora_path="/load_lora_adapter",
        version=Call("GET", facts.routes("sglang")["weightVersion"]),
        checksum=None,
    ),
}


def routes_for(kind: str) -> EngineRoutes:
    return ROUTES[kind]


def admin_root(kind: str, engine: Engine) -> str:
    """Where an engine's admin routes sit: its admin URL without the suffix the engine's admin base adds
    (vLLM's and prime-rl's `/v1`: their routes sit at the root; SGLang's none: the URL is the root)."""
    return engine.admin_url.rstrip("/") if facts.routes(kind)["admin"] == "" else engine.origin


def reported_version(kind: str, body: Any) -> str | None:
    """The weight version an engine reports, from its version route's body."""
    if isinstance(body, dict):
        v = body.get("weight_version")
        return None if v is None else str(v)
    return None
