"""A stack's outputs, through the Pulumi CLI (`pulumi stack output --json --show-secrets`) or Pulumi's
Python Automation API (the optional `automation` extra), `up` / `destroy` through the latter, and
`keep` and `cost` through the project's own fleet CLI (`fleet keep`, `fleet cost --json`): one keeper and one
accounting, whichever language asks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable

from .errors import FleetError


def outputs_via_cli(stack: str, work_dir: str | Path | None) -> dict[str, Any]:
    pulumi = shutil.which("pulumi")
    if pulumi is None:
        raise FleetError("the pulumi CLI is not on PATH: install it, or read the stack with via='automation', or use Fleet.from_endpoints")
    # --show-secrets: the apiKey output is a secret; it stays in this process and is never logged.
    proc = subprocess.run(
        [pulumi, "stack", "output", "--json", "--show-secrets", "--stack", stack],
        cwd=work_dir, capture_output=True, text=True, env=os.environ.copy(), check=False,
    )
    if proc.returncode != 0:
        raise FleetError(f"pulumi stack output --stack {stack} failed (exit {proc.returncode}): {proc.stderr.strip()[:600]}")
    try:
        outputs = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise FleetError(f"pulumi stack output --stack {stack} printed no JSON: {e}") from None
    if not isinstance(outputs, dict):
        raise FleetError(f"pulumi stack output --stack {stack} printed {type(outputs).__name__}, not the outputs object")
    return outputs


def _automation() -> Any:
    try:
        from pulumi import automation
    except ImportError:
        raise FleetError("Pulumi's Automation API is not installed: pip install 'vllm-fleet[automation]'") from None
    return automation


def select(stack: str, work_dir: str | Path | None) -> Any:
    auto = _automation()
    return auto.select_stack(stack_name=stack, work_dir=str(work_dir or os.getcwd()))


def outputs_via_automation(stack: str, work_dir: str | Path | None) -> dict[str, Any]:
    return {k: v.value for k, v in select(stack, work_dir).outputs().items()}


def up(stack: str, work_dir: str | Path | None, on_output: Callable[[str], None] | None) -> dict[str, Any]:
    result = select(stack, work_dir).up(on_output=on_output)
    return {k: v.value for k, v in result.outputs.items()}


def destroy(stack: str, work_dir: str | Path | None, on_output: Callable[[str], None] | None) -> None:
    select(stack, work_dir).destroy(on_output=on_output)


def _fleet_cli(root: Path, verb: str) -> list[str]:
    cli = root / "dist" / "bin" / "fleet.js"
    if not cli.is_file():
        raise FleetError(f"{cli} is missing: Fleet.{verb} runs the vllm-fleet project's `fleet {verb}` (work_dir= its folder, after npm ci)")
    node = shutil.which("node")
    if node is None:
        raise FleetError(f"node is not on PATH: Fleet.{verb} runs the vllm-fleet project's `fleet {verb}`, a Node program")
    return [node, str(cli)]


def _fleet_json(verb: str, stack: str, work_dir: str | Path | None, service: str | None) -> tuple[Any, subprocess.CompletedProcess[str]]:
    """Runs the project's `fleet <verb> <stack> --json` in `work_dir`: its JSON answer (None when its
    standard output is not JSON) and the finished process."""
    root = Path(work_dir or os.getcwd())
    args = [*_fleet_cli(root, verb), verb, stack, "--json", *(["--service", service] if service else [])]
    proc = subprocess.run(args, cwd=root, capture_output=True, text=True, env=os.environ.copy(), check=False)
    try:
        return json.loads(proc.stdout), proc
    except json.JSONDecodeError:
        return None, proc


def cost(stack: str, work_dir: str | Path | None, *, service: str | None, partial: bool) -> dict[str, Any]:
    """Runs the project's `fleet cost <stack> --json` in `work_dir` and returns its report (format
    vllm-fleet/cost/v1). The scheduler is asked where it runs (over ssh for SLURM), as the CLI does.
    A report with jobs nobody could see (`complete` false: its sums are lower bounds) is returned only
    with `partial`; otherwise, and whenever no report came, FleetError says why."""
    report, proc = _fleet_json("cost", stack, work_dir, service)
    if not isinstance(report, dict) or report.get("format") != "vllm-fleet/cost/v1":
        raise FleetError(f"fleet cost {stack} answered no report (exit {proc.returncode}): {proc.stderr.strip()[:600]}")
    if not report.get("complete") and not partial:
        unseen = [f"island {i['island']} {u['id']}: {u['why']}" for i in report.get("islands", []) for u in i.get("unaccounted", [])]
        raise FleetError(f"fleet cost {stack}: some jobs' time was not seen (pass partial=True for the lower bounds): {'; '.join(unseen)}")
    return report


def wake(stack: str, work_dir: str | Path | None, *, service: str | None) -> list[dict[str, Any]]:
    """Runs the project's `fleet wake <stack> --json` in `work_dir` (Kubernetes: the islands idle release
    scaled to zero back at their planned replicas) and returns the islands it woke; FleetError says why
    when it did not answer (the API server refused, or the stack is not on Kubernetes)."""
    answer, proc = _fleet_json("wake", stack, work_dir, service)
    woken = answer.get("woken") if isinstance(answer, dict) and proc.returncode == 0 else None
    if not isinstance(woken, list) or not all(isinstance(w, dict) for w in woken):
        raise FleetError(f"fleet wake {stack} woke nothing (exit {proc.returncode}): {proc.stderr.strip()[:600]}")
    return woken


def keep(
    stack: str,
    work_dir: str | Path | None,
    *,
    every: int,
    max_ups: int,
    window: int,
    once: bool,
    on_output: Callable[[str], None] | None,
) -> None:
    """Runs the project's `fleet keep <stack>` (dist/bin/fleet.js, built by `npm ci`) in `work_dir`, the
    vllm-fleet project folder, each line of its log to `on_output`; raises FleetError when it ends
    non-zero (it gave up past its budget, a --once up failed, or a --once check could not be made)."""
    root = Path(work_dir or os.getcwd())
    args = [*_fleet_cli(root, "keep"), "keep", stack, "--every", str(every), "--max-ups", str(max_ups), "--window", str(window)]
    if once:
        args.append("--once")
    last: list[str] = []
    with subprocess.Popen(args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy()) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            last = (last + [line])[-20:]
            if on_output:
                on_output(line)
        code = proc.wait()
    if code != 0:
        tail = "\n".join(f"  {x}" for x in last)
        raise FleetError(f"fleet keep {stack} ended with exit {code}:\n{tail}")
