"""The e2e tests run against a fleet deployed by test/e2e/python-client.e2e.test.ts, which passes its
endpoints.json (and key) in the environment. Without it they skip, saying so."""

from __future__ import annotations

import os

import pytest

from vllm_fleet import Fleet


@pytest.fixture(scope="module")
def endpoints_file() -> str:
    path = os.environ.get("FLEET_CLIENT_ENDPOINTS")
    if not path:
        pytest.skip("FLEET_CLIENT_ENDPOINTS is not set: these tests need a deployed fleet (test/e2e/python-client.e2e.test.ts deploys one)")
    return path


@pytest.fixture(scope="module")
def fleet(endpoints_file: str):
    with Fleet.from_endpoints(endpoints_file) as f:
        f.wait_until_ready(timeout=120)
        yield f
