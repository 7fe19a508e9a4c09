"""What the program declares of each engine (components/plan/engines.ts, engineFacts): its routes,
metric names and the weight version it reports before any update. engines.json is the program's
schema/engines.json, vendored byte for byte (test/bin/schema.test.ts), so the client never spells
them again."""

from __future__ import annotations

import json
from importlib import resources
from typing import TypedDict


class EngineFacts(TypedDict):
    routes: dict[str, str]
    metrics: dict[str, str]
    baseWeightVersion: str


ENGINES: dict[str, EngineFacts] = json.loads(resources.files(__package__).joinpath("engines.json").read_text("utf-8"))["engines"]


def routes(kind: str) -> dict[str, str]:
    """The engine's HTTP paths: health, models, metrics, api, admin (its admin URL's suffix), weightVersion."""
    return ENGINES[kind]["routes"]


def metric_names(kind: str) -> dict[str, str]:
    """The engine's Prometheus series by quantity (running, waiting, kvUsage, promptTokens, ...)."""
    return ENGINES[kind]["metrics"]
