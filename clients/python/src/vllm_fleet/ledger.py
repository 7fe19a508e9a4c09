"""The weight ledger: after an update, do all engines serve the same weights? Each engine's own
report where it has one (vLLM's /weight_info and /weight_checker, SGLang's /model_info), else a fixed
greedy probe sent to every engine directly, whose token ids must agree."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from .endpoints import Engine, ServiceEndpoints, api_base
from .engines import admin_root, reported_version, routes_for
from .errors import EngineResult, FleetError, WeightMismatch
from .http import Http

PROBE_PROMPT = "vllm-fleet weight probe: the quick brown fox"
PROBE_TOKENS = 8


def _probe(http: Http, svc: ServiceEndpoints, engine: Engine) -> EngineResult:
    body = {
        "model": svc.model,
        "prompt": PROBE_PROMPT,
        "max_tokens": PROBE_TOKENS,
        "temperature": 0,
        "ignore_eos": True,  # a fixed length: an early EOS on one engine must not hide a difference after it
        "return_token_ids": True,
    }
    try:
        r = http.request("POST", api_base(svc.engine, engine.admin_url) + "/completions", json=body, timeout=120)
        doc = r.json() if r.status_code == 200 else None
    except Exception as e:  # noqa: BLE001 - any failure is this engine's, named
        return EngineResult(engine=engine.name, ok=False, error=f"probe: {type(e).__name__}: {e}")
    if doc is None:
        return EngineResult(engine=engine.name, ok=False, status=r.status_code, error=f"probe answered {r.status_code}: {r.text[:300]}")
    choice = doc["choices"][0]
    ids = choice.get("token_ids")
    return EngineResult(engine=engine.name, ok=True, body=ids if ids is not None else choice.get("text"))


def _differing(values: dict[str, Any]) -> list[str]:
    """Engines whose value is not the most common one (every engine when no value is)."""
    keyed = {name: json.dumps(v, sort_keys=True) for name, v in values.items()}
    counts = Counter(keyed.values()).most_common()
    if len(counts) <= 1:
        return []
    if counts[0][1] == counts[1][1]:
        return sorted(keyed)
    return sorted(n for n, k in keyed.items() if k != counts[0][0])


def check(http: Http, svc: ServiceEndpoints, version: str | None) -> dict[str, Any]:
    """Returns the ledger (per engine: what was compared); raises WeightMismatch naming the engines that differ."""
    routes = routes_for(svc.engine)
    engines = svc.engines
    report: dict[str, Any] = {"method": None, "version": version, "engines": {}}
    differing: list[str] = []
    reasons: list[str] = []

    if routes.version is not None:
        version_call = routes.version
        got = http.each(engines, lambda e: http.call(admin_root(svc.engine, e), version_call, e.name, timeout=30))
        if all(r.ok for r in got):
            report["method"] = "engine report"
            versions = {r.engine: reported_version(svc.engine, r.body) for r in got}
            for name, v in versions.items():
                report["engines"].setdefault(name, {})["version"] = v
            if version is not None:
                bad = sorted(n for n, v in versions.items() if v != version)
                reasons += [f"{n} reports weight version {versions[n]!r}, not {version!r}" for n in bad]
                differing += bad
    if routes.checksum is not None:
        checksum_call = routes.checksum
        got = http.each(engines, lambda e: http.call(admin_root(svc.engine, e), checksum_call, e.name, timeout=300))
        if all(r.ok and isinstance(r.body, dict) for r in got):
            report["method"] = "engine report"
            sums = {r.engine: r.body.get("checksums") for r in got}
            for name, s in sums.items():
                report["engines"].setdefault(name, {})["checksums"] = len(s or {})
            bad = _differing(sums)
            reasons += [f"{n}'s weight checksums differ from the other engines'" for n in bad]
            differing += bad
    if report["method"] is None:
        got = http.each(engines, lambda e: _probe(http, svc, e))
        failed = [r for r in got if not r.ok]
        if failed:
            raise FleetError("the weight probe could not run on every engine:\n" + "\n".join(f"  {r.describe()}" for r in failed))
        report["method"] = "greedy probe"
        ids = {r.engine: r.body for r in got}
        for name, v in ids.items():
            report["engines"].setdefault(name, {})["probe"] = v
        bad = _differing(ids)
        reasons += [f"{n} answers the greedy probe with {ids[n]}, the others with something else" for n in bad]
        differing += bad
    if differing:
        names = sorted(set(differing))
        raise WeightMismatch("the engines do not serve the same weights:\n" + "\n".join(f"  {r}" for r in reasons), names, report)
    return report
