"""The fleet's weights record: after an update, the calls that loaded the weights, written into each
island's folder beside its endpoints.json. An engine that restarts starts from the base model; the
island's router follower (templates/host/helpers.sh.mustache, fleet_replay_weights) replays these
calls to it and tells it to the router only once it serves the recorded version. The format is
lines a shell reads without a JSON parser: `version V`, then `call METHOD PATH BODY` per call (BODY
one line of JSON, which json.dumps never breaks)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlencode

from .engines import Call
from .errors import FleetError


def render(version: str, calls: list[Call]) -> str:
    """The record's text; refuses what the shell side could not read back as written."""
    if not version or "\n" in version or "\r" in version or version != version.strip():
        raise FleetError(f"weight version {version!r} cannot be recorded: one line, no surrounding spaces")
    lines = ["# vllm-fleet weights record (Fleet.update_weights); replayed to an engine that restarts", f"version {version}"]
    for c in calls:
        path = c.path + ("?" + urlencode(c.params) if c.params else "")
        if c.method not in ("POST", "PUT") or not path.startswith("/") or any(ch.isspace() for ch in path):
            raise FleetError(f"internal error: {c.method} {path} cannot be recorded")
        lines.append(f"call {c.method} {path} {json_line(c.json)}")
    return "\n".join(lines) + "\n"


def json_line(body: object) -> str:
    return json.dumps({} if body is None else body, separators=(",", ":"))


def write(path: Path, version: str, calls: list[Call]) -> None:
    """Replaces the record at `path` whole (a reader never sees half of one)."""
    text = render(version, calls)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)
