"""Fleet.from_stack under the real Pulumi engine: the README quickstart's stack after `pulumi up`
(test/e2e/pulumi-engine.e2e.test.ts sets FLEET_CLIENT_STACK, runs this in the project, with the
Pulumi CLI on PATH and its backend and passphrase in the environment)."""

from __future__ import annotations

import os

import pytest

from vllm_fleet import Fleet


def test_from_stack_through_the_cli_reads_the_contract_and_the_secret_key(stack: str) -> None:
    os.environ.pop("VLLM_API_KEY", None)  # the key comes from the stack's secret output, nowhere else
    with Fleet.from_stack(stack, work_dir=os.environ["FLEET_CLIENT_WORK_DIR"]) as fleet:
        assert fleet.endpoints.api_key_required is True
        assert fleet.status().status == "READY"
        out = fleet.generate("from the stack", max_tokens=3)
        assert len(out.token_ids[0]) == 3


def test_from_stack_through_the_automation_api_agrees_with_the_cli(stack: str) -> None:
    work_dir = os.environ["FLEET_CLIENT_WORK_DIR"]
    with Fleet.from_stack(stack, work_dir=work_dir) as cli, Fleet.from_stack(stack, work_dir=work_dir, via="automation") as auto:
        assert auto.endpoints.engines == cli.endpoints.engines
        assert auto.endpoints.islands == cli.endpoints.islands
        assert auto.status().status == "READY"


def test_a_stack_that_does_not_exist_is_named(stack: str) -> None:
    with pytest.raises(Exception, match="no-such-stack"):
        Fleet.from_stack("no-such-stack", work_dir=os.environ["FLEET_CLIENT_WORK_DIR"])


def test_up_through_the_automation_api_changes_nothing_on_a_fleet_that_is_up(stack: str) -> None:
    work_dir = os.environ["FLEET_CLIENT_WORK_DIR"]
    lines: list[str] = []
    with Fleet.from_stack(stack, work_dir=work_dir) as before, Fleet.up(stack, work_dir=work_dir, on_output=lines.append) as after:
        assert after.endpoints.engines == before.endpoints.engines
        assert after.status().status == "READY"
    summary = "".join(lines)
    assert "Resources:" in summary and "unchanged" in summary, summary[-2000:]
    assert not any(w in summary for w in ("+ create", "~ update", "- delete", "+-replace")), summary[-2000:]
