"""metrics(): every engine's /metrics, parsed with prometheus_client's text parser, summed as `fleet
metrics` sums them (the names are the engines' own: vllm/v1/metrics/loggers.py,
python/sglang/srt/metrics/collector.py)."""

from __future__ import annotations

from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from . import facts
from .endpoints import ServiceEndpoints
from .engines import admin_root
from .http import Http

# The quantities reported, by the program's name for each (facts.metric_names).
QUANTITIES = {
    "running": "running",
    "waiting": "waiting",
    "kv_cache_usage": "kvUsage",
    "prompt_tokens": "promptTokens",
    "generation_tokens": "generationTokens",
}
# Each quantity's series, every engine's; counters without their _total suffix, as the parser names families.
NAMES = {
    key: tuple(sorted({facts.metric_names(kind)[name].removesuffix("_total") for kind in facts.ENGINES}))
    for key, name in QUANTITIES.items()
}
MEANS = {"kv_cache_usage"}


def _scrape(http: Http, url: str) -> dict[str, float] | str:
    try:
        r = http.request("GET", url, timeout=10)
    except httpx.HTTPError as e:
        return f"{type(e).__name__}: {e}"
    if r.status_code != 200:
        return f"/metrics answered {r.status_code}"
    wanted = {name: key for key, names in NAMES.items() for name in names}
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(r.text):
        key = wanted.get(family.name)
        if key is None:
            continue
        for s in family.samples:
            if s.name.endswith("_created"):
                continue
            out[key] = out.get(key, 0.0) + float(s.value)
    return out


def metrics(http: Http, svc: ServiceEndpoints) -> dict[str, Any]:
    """{"engines": {name: values or {"error": ...}}, "totals": summed values (kv_cache_usage: the mean)}."""
    engines = svc.engines
    got = http.each(engines, lambda e: _scrape(http, admin_root(svc.engine, e) + "/metrics"))
    per: dict[str, Any] = {}
    totals: dict[str, float] = {}
    seen = 0
    for e, g in zip(engines, got):
        if isinstance(g, str):
            per[e.name] = {"error": g}
            continue
        per[e.name] = g
        seen += 1
        for k, v in g.items():
            totals[k] = totals.get(k, 0.0) + v
    for k in MEANS & totals.keys():
        totals[k] /= seen
    return {"engines": per, "totals": totals, "scraped": seen, "of": len(engines)}
