"""Fleet.wake runs the project's own `fleet wake <stack> --json` (dist/bin/fleet.js) and returns the islands it
woke; no answer is a FleetError with the CLI's message. The project CLI here is a stand-in script printing what
it is told; the real `fleet wake` against a real API server is tested in test/e2e/k8s-idle-release.e2e.test.ts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_fleet import Fleet, FleetError

from cli_standin import needs_node, project

@needs_node
def test_returns_the_islands_woken_and_passes_the_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_REPORT", json.dumps({"woken": [{"island": 0, "detail": "ARGS"}]}).replace('"ARGS"', "ARGS"))
    woken = Fleet.wake("dev", service="policy", work_dir=project(tmp_path))
    assert woken == [{"island": 0, "detail": ["wake", "dev", "--json", "--service", "policy"]}]


@needs_node
def test_a_failed_wake_is_a_fleet_error_with_the_cli_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_EXIT", "2")
    monkeypatch.setenv("STANDIN_ERR", "wake scales a Kubernetes fleet's released islands back")
    with pytest.raises(FleetError, match=r"fleet wake dev woke nothing \(exit 2\): wake scales a Kubernetes fleet"):
        Fleet.wake("dev", work_dir=project(tmp_path))
