import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("RL_TEST_REDIS_URL")
    if not url:
        pytest.skip("RL_TEST_REDIS_URL is not set (run under scripts/with-redis)")
    return url


def unique_prefix(request: pytest.FixtureRequest) -> str:
    import re

    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:40]
    return f"py{os.getpid()}{name}"


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """A Redis key prefix unique to the test and the run."""
    return unique_prefix(request)


@pytest.fixture(params=["memory", "redis"])
def store_url(request: pytest.FixtureRequest) -> str:
    """Both backends, each with a manual clock (exact counts) and a fresh prefix."""
    if request.param == "memory":
        return "memory://?clock=manual"
    url = os.environ.get("RL_TEST_REDIS_URL")
    if not url:
        pytest.skip("RL_TEST_REDIS_URL is not set (run under scripts/with-redis)")
    return f"{url}?clock=manual&prefix={unique_prefix(request)}"
