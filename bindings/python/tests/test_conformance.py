"""The YAML conformance suite (conformance/*.yaml) through the public API:
memory:// and Redis, sync methods and their async twins (on memory:// the
async ones go through rl's I/O thread: inline=False)."""

import pytest

from conformance_runner import case_url, default_files, load_cases, run_loaded

CASES = [
    pytest.param(case, problem, id=f"{path.stem}: {name}")
    for path in default_files()
    for name, case, problem in load_cases(path)
]


def test_there_are_cases():
    assert len(CASES) > 100


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("case,problem", CASES)
def test_memory(case, problem, use_async):
    assert run_loaded(case, problem, case_url("memory://", 0), use_async) == ""


_counter = iter(range(1, 1 << 30))


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("case,problem", CASES)
def test_redis(case, problem, use_async, redis_url):
    url = case_url(redis_url, next(_counter)) + ("a" if use_async else "s")
    assert run_loaded(case, problem, url, use_async) == ""
