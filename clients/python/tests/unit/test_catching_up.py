"""update_weights while an engine restarts: with a version, for islands read from their endpoints.json
(so each has a weights record), the serving engines are updated and the one not serving is left to
the record, which its router's follower replays before telling it again (docs/restarts.md). Against
stand-in vLLM engines (small HTTP servers in this process, named as such; the real engines and the
replay run in the end-to-end drills)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from vllm_fleet import FanOutError, Fleet
from vllm_fleet import weights_record
from vllm_fleet.engines import routes_for


class Engine:
    """A stand-in vLLM engine in dev mode: pause, resume, reload_weights, weight versions; it records the paths it was sent."""

    def __init__(self) -> None:
        self.version = "default"
        self.calls: list[str] = []
        engine = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, code: int, body: object) -> None:
                self.send_response(code)
                self.end_headers()
                self.wfile.write(json.dumps(body).encode())

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path == "/health":
                    return self._send(200, {})
                if self.path == "/v1/models":
                    return self._send(200, {"data": [{"id": "tiny"}]})
                if self.path == "/weight_info":
                    return self._send(200, {"weight_version": engine.version})
                self._send(404, {})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                engine.calls.append(self.path.split("?")[0])
                if self.path == "/update_weight_version":
                    engine.version = body["new_version"]
                if self.path == "/weight_checker":
                    return self._send(404, {})
                self._send(200, {})

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def island_doc(admin: list[str]) -> dict:
    """A running island's endpoints.json (schema/island.schema.json) with these engines and no router."""
    return {
        "format": "vllm-fleet/island/v1",
        "dryRun": False,
        "stack": "dev",
        "island": 0,
        "jobName": "dev-i0",
        "jobId": "100",
        "adopted": False,
        "model": "tiny",
        "engine": "vllm",
        "nodes": [{"name": "n0", "host": "localhost", "addr": "127.0.0.1"}],
        "routerUrl": None,
        "engines": [{"id": f"e{k}", "role": "replica", "replica": k, "url": u} for k, u in enumerate(admin)],
        "adminUrls": admin,
        "roles": ["replica"] * len(admin),
        "mooncake": None,
        "timing": {"submittedAt": 1.0, "runningAt": 2.0, "readyAt": 3.0},
    }


@pytest.fixture
def engines() -> Iterator[list[Engine]]:
    es = [Engine(), Engine()]
    yield es
    for e in es:
        e.server.shutdown()


def test_the_serving_engines_are_updated_and_the_restarting_one_left_to_the_record(engines: list[Engine], tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}/v1"
    (tmp_path / "endpoints.json").write_text(json.dumps(island_doc([engines[0].url, down, engines[1].url])))
    fleet = Fleet.from_endpoints(str(tmp_path / "endpoints.json"))
    try:
        out = fleet.update_weights(str(tmp_path), version="v2")
    finally:
        fleet.close()
    name = fleet.endpoints.engines[1].name
    assert out["catching_up"] == [name]
    assert out["recorded"] == [str(tmp_path / "weights")]
    assert (tmp_path / "weights").read_text("utf-8") == weights_record.render(
        "v2", routes_for("vllm").update_weights(str(tmp_path), "v2"), model="tiny", engine="vllm"
    )
    for e in engines:
        assert e.version == "v2"
        assert e.calls == ["/pause", "/collective_rpc", "/update_weight_version", "/resume", "/weight_checker"]
    # The ledger checked the serving engines only.
    assert sorted(out["ledger"]["engines"]) == sorted(e.name for e in fleet.endpoints.engines if e.name != name)
    assert fleet._catching_up == frozenset()


def test_without_a_version_or_a_record_it_still_refuses_naming_the_engine(engines: list[Engine], tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}/v1"
    doc = island_doc([engines[0].url, down])
    (tmp_path / "endpoints.json").write_text(json.dumps(doc))
    for fleet, version in [(Fleet.from_endpoints(str(tmp_path / "endpoints.json")), None), (Fleet.from_endpoints(doc), "v2")]:
        try:
            with pytest.raises(FanOutError, match=r"1 engine\(s\) were not serving, so nothing was sent"):
                fleet.update_weights(str(tmp_path), version=version)
        finally:
            fleet.close()
    assert engines[0].calls == []
    assert not (tmp_path / "weights").exists()
