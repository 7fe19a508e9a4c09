"""The fleet's weights record: after an update, the calls that loaded the weights, written into each
island's folder beside its endpoints.json. An engine that restarts starts from the base model; the
island's router follower (templates/host/helpers.sh.mustache, fleet_replay_weights) replays these
calls to it and tells it to the router only once it serves the recorded version; an island that
`pulumi up` brings back after its job was lost loads it at its first start when it names the island's
model and engine (templates/host/revival.sh.mustache). The format is lines a shell reads without a
JSON parser: `version V`, `model M`, `engine E`, then `call METHOD PATH BODY` per call (BODY one line
of JSON, which json.dumps never breaks)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlencode

from .engines import Call
from .errors import FleetError


def render(version: str, calls: list[Call], *, model: str, engine: str) -> str:
    """The record's text; refuses what the shell side could not read back as written."""
    for what, value in (("weight version", version), ("model", model), ("engine", engine)):
        if not value or "\n" in value or "\r" in value or value != value.strip():
            raise FleetError(f"{what} {value!r} cannot be recorded: one line, no surrounding spaces")
    lines = [
        "# vllm-fleet weights record (Fleet.update_weights); replayed to an engine that restarts",
        f"version {version}",
        f"model {model}",
        f"engine {engine}",
    ]
    for c in calls:
        path = c.path + ("?" + urlencode(c.params) if c.params else "")
        if c.method not in ("POST", "PUT") or not path.startswith("/") or any(ch.isspace() for ch in path):
            raise FleetError(f"internal error: {c.method} {path} cannot be recorded")
        lines.append(f"call {c.method} {path} {json_line(c.json)}")
    return "\n".join(lines) + "\n"


def json_line(body: object) -> str:
    return json.dumps({} if body is None else body, separators=(",", ":"))


def write(path: Path, version: str, calls: list[Call], *, model: str, engine: str) -> None:
    """Replaces the record at `path` whole (a reader never sees half of one)."""
    text = render(version, calls, model=model, engine=engine)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)
