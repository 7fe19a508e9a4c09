"""Fleet.status() against stand-in engines (small HTTP servers in this process, named as such: the real
engines' routes are exercised in tests/e2e): each engine's weight version, RESTARTING for one serving
other weights than the fleet's, DEGRADED for an island that serves with fewer engines, LAUNCHING for
one that does not answer."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from vllm_fleet import Fleet

BLOCKS = {"primeRl": None, "nexrl": "", "verl": "", "openaiEnv": {}}


def standin(version: str | None) -> ThreadingHTTPServer:
    """A stand-in vLLM engine (or router, version None): /health, /v1/models listing "tiny", /weight_info."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            routes = {"/health": {}, "/v1/models": {"data": [{"id": "tiny"}]}}
            if version is not None:
                routes["/weight_info"] = {"weight_version": version}
            body = routes.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(json.dumps(body or {}).encode())

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def fleet() -> Iterator[Fleet]:
    servers = [standin(None), standin("v2"), standin("v2"), standin("default")]
    url = lambda s: f"http://127.0.0.1:{s.server_address[1]}"  # noqa: E731
    # The fourth engine is down: nothing listens on its port.
    admin = [url(s) + "/v1" for s in servers[1:]] + [f"http://127.0.0.1:{free_port()}/v1"]
    island = {
        "island": 0,
        "model": "tiny",
        "routerUrl": url(servers[0]) + "/v1",
        "adminUrls": admin,
        "roles": ["replica"] * 4,
        "engineCount": 4,
        "trainers": BLOCKS,
    }
    doc = {
        "model": "tiny",
        "target": "local",
        "engine": "vllm",
        "baseUrls": [island["routerUrl"]],
        "adminUrls": admin,
        "roles": ["replica"] * 4,
        "engineCount": 4,
        "apiKeyRequired": False,
        "islands": [island],
        "trainers": BLOCKS,
    }
    f = Fleet.from_endpoints(doc)
    yield f
    f.close()
    for s in servers:
        s.shutdown()


def test_each_engines_weight_version_and_restarting_against_most_of_its_island(fleet: Fleet) -> None:
    s = fleet.status()
    by_id = {p.id: p for p in s.islands[0].processes}
    assert [(p.id, p.status, p.weight_version) for p in s.islands[0].processes] == [
        ("router", "READY", None),
        ("engine-0", "READY", "v2"),
        ("engine-1", "READY", "v2"),
        ("engine-2", "RESTARTING", "default"),
        ("engine-3", "LAUNCHING", None),
    ]
    assert by_id["engine-2"].detail == "serves weight version default, the fleet's is v2: kept out of the router until an update reaches it"
    assert by_id["engine-3"].detail.startswith("not answering (ConnectError")
    assert (s.islands[0].status, s.status) == ("DEGRADED", "DEGRADED")


def test_the_version_this_fleet_applied_wins_over_the_majority(fleet: Fleet) -> None:
    fleet._applied_version = "default"  # as update_weights(version="default") leaves it
    s = fleet.status()
    assert [p.status for p in s.islands[0].processes] == ["READY", "RESTARTING", "RESTARTING", "READY", "LAUNCHING"]
