"""Fleet.keep runs the project's own `fleet keep` (dist/bin/fleet.js) with its options, streams its log
lines and turns a non-zero exit into FleetError with the last lines. The project CLI here is a stand-in
script (it prints its arguments and exits as told); the real `fleet keep` against a real run and the
real Pulumi engine is tested in test/e2e/pulumi-local.e2e.test.ts."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_fleet import Fleet, FleetError

from cli_standin import needs_node
from cli_standin import project as standin_project

ARGV_STANDIN = """
const args = process.argv.slice(2);
console.log("argv " + JSON.stringify(args));
console.log("cwd " + process.cwd());
process.exit(Number(process.env.STANDIN_EXIT || 0));
"""


@needs_node
def test_passes_its_options_and_streams_each_line(tmp_path: Path) -> None:
    root = standin_project(tmp_path, ARGV_STANDIN)
    lines: list[str] = []
    Fleet.keep("dev", work_dir=root, every=30, max_ups=2, window=600, once=True, on_output=lines.append)
    assert lines == [
        'argv ["keep","dev","--every","30","--max-ups","2","--window","600","--once"]',
        f"cwd {root}",
    ]


@needs_node
def test_a_non_zero_exit_is_a_fleet_error_with_the_last_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = standin_project(tmp_path, ARGV_STANDIN)
    monkeypatch.setenv("STANDIN_EXIT", "1")
    with pytest.raises(FleetError, match=r"fleet keep dev ended with exit 1:\n  argv \[\"keep\",\"dev\",\"--every\",\"60\""):
        Fleet.keep("dev", work_dir=root, on_output=None)


def test_outside_the_project_it_says_what_it_needs(tmp_path: Path) -> None:
    with pytest.raises(FleetError, match=r"dist/bin/fleet.js is missing: Fleet.keep runs the vllm-fleet project's `fleet keep`"):
        Fleet.keep("dev", work_dir=tmp_path)
