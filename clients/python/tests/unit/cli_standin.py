"""A stand-in for the project's own CLI (dist/bin/fleet.js), for the client's calls of `fleet <verb>`: a
Node script that prints what the test tells it ($STANDIN_REPORT, with ARGS replaced by its argv as JSON;
$STANDIN_ERR on stderr) and exits with $STANDIN_EXIT."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

STANDIN = """
const args = process.argv.slice(2);
if (process.env.STANDIN_REPORT) process.stdout.write(process.env.STANDIN_REPORT.replace("ARGS", JSON.stringify(args)));
process.stderr.write(process.env.STANDIN_ERR || "");
process.exit(Number(process.env.STANDIN_EXIT || 0));
"""

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")


def project(tmp_path: Path, script: str = STANDIN) -> Path:
    """A project folder whose dist/bin/fleet.js is `script`."""
    cli = tmp_path / "dist" / "bin" / "fleet.js"
    cli.parent.mkdir(parents=True)
    cli.write_text(script)
    return tmp_path
