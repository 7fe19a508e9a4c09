"""A user who drives everything from Python: Fleet.up of a configured stack with nothing deployed,
traffic, Fleet.destroy (test/e2e/pulumi-engine.e2e.test.ts configures the stack and checks squeue after)."""

from __future__ import annotations

import os

import pytest

from vllm_fleet import Fleet, FleetError


def test_up_generate_destroy(stack: str) -> None:
    work_dir = os.environ["FLEET_CLIENT_WORK_DIR"]
    lines: list[str] = []
    with Fleet.up(stack, work_dir=work_dir, on_output=lines.append) as fleet:
        assert "created" in "".join(lines), "".join(lines)[-2000:]
        assert fleet.wait_until_ready(timeout=120).status == "READY"
        assert len(fleet.endpoints.engines) == 2
        out = fleet.generate([f"rollout {i}" for i in range(4)], max_tokens=3)
        assert [len(t) for t in out.token_ids] == [3, 3, 3, 3]
    Fleet.destroy(stack, work_dir=work_dir, on_output=lines.append)
    assert "deleted" in "".join(lines)
    with pytest.raises(FleetError, match="exports no `endpoints` output"):
        Fleet.from_stack(stack, work_dir=work_dir)
