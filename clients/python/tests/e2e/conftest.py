"""The e2e tests run against a fleet deployed by test/e2e/python-client.e2e.test.ts, which passes its
endpoints.json (and key) in the environment. Without it they skip, saying so."""

from __future__ import annotations

import os

import pytest

from vllm_fleet import Fleet


def required_env(name: str, needs: str) -> str:
    """The variable the deploying suite sets, or a skip that says what is missing."""
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set: this needs {needs}")
    return value


@pytest.fixture(scope="module")
def endpoints_file() -> str:
    return required_env("FLEET_CLIENT_ENDPOINTS", "a deployed fleet (test/e2e/python-client.e2e.test.ts deploys one)")


@pytest.fixture(scope="module")
def stack() -> str:
    return required_env("FLEET_CLIENT_STACK", "a stack under the real Pulumi engine (test/e2e/pulumi-engine.e2e.test.ts)")


@pytest.fixture(scope="module")
def fleet(endpoints_file: str):
    with Fleet.from_endpoints(endpoints_file) as f:
        f.wait_until_ready(timeout=120)
        yield f
