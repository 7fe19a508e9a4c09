"""Fleet.cost runs the project's own `fleet cost <stack> --json` (dist/bin/fleet.js) and returns its report;
a report with unseen jobs is an error unless partial=True, and no report is always one. The project CLI
here is a stand-in script printing what it is told; the real `fleet cost` against real schedulers is
tested in test/e2e/fleet-cost.e2e.test.ts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_fleet import Fleet, FleetError

from cli_standin import needs_node, project

def report(complete: bool) -> str:
    unaccounted = [] if complete else [{"id": "900", "current": False, "why": "scontrol no longer knows job 900"}]
    return json.dumps({
        "format": "vllm-fleet/cost/v1",
        "argv": "ARGS",
        "complete": complete,
        "total": {"gpuHours": 12.5, "busy": 10.0},
        "islands": [{"island": 0, "unaccounted": unaccounted}],
    }).replace('"ARGS"', "ARGS")


@needs_node
def test_returns_the_cli_report_and_passes_the_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_REPORT", report(True))
    r = Fleet.cost("dev", service="policy", work_dir=project(tmp_path))
    assert r["argv"] == ["cost", "dev", "--json", "--service", "policy"]
    assert r["total"]["gpuHours"] == 12.5


@needs_node
def test_unseen_jobs_raise_unless_partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    monkeypatch.setenv("STANDIN_REPORT", report(False))
    monkeypatch.setenv("STANDIN_EXIT", "1")
    with pytest.raises(FleetError, match=r"some jobs' time was not seen .*island 0 900: scontrol no longer knows job 900"):
        Fleet.cost("dev", work_dir=root)
    assert Fleet.cost("dev", work_dir=root, partial=True)["complete"] is False


@needs_node
def test_no_report_is_a_fleet_error_with_the_cli_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_EXIT", "1")
    monkeypatch.setenv("STANDIN_ERR", "the scheduler did not answer, so no hours are reported: island 0: squeue failed")
    with pytest.raises(FleetError, match=r"fleet cost dev answered no report \(exit 1\): the scheduler did not answer"):
        Fleet.cost("dev", work_dir=project(tmp_path))


def test_outside_the_project_it_says_what_it_needs(tmp_path: Path) -> None:
    with pytest.raises(FleetError, match=r"dist/bin/fleet.js is missing: Fleet.cost runs the vllm-fleet project's `fleet cost`"):
        Fleet.cost("dev", work_dir=tmp_path)
