"""The YAML conformance suite (conformance/*.yaml) through the public API:
memory:// and Redis, sync methods and their async twins (on memory:// the
async ones go through rl's I/O thread: inline=False)."""

import pytest

from conformance_runner import SCHEMA, SCHEMA_DIR, case_url, default_files, load_cases, run_loaded

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


REFUSED = SCHEMA_DIR / "unknown_fields.yaml"


@pytest.mark.parametrize("name,case,problem", list(load_cases(REFUSED)), ids=lambda v: v if isinstance(v, str) else "")
def test_unknown_field_is_refused(name, case, problem):
    """conformance/schema/unknown_fields.yaml: each case is refused before it
    runs, naming the field the schema does not know."""
    failure = run_loaded(case, problem, case_url("memory://", 0), False)
    assert failure.startswith("bad case: ") and "unknown field 'bogus_" in failure, f"{REFUSED.name}: {name}: {failure}"


def test_readme_names_every_field_of_the_schema():
    """conformance/README.md documents the format from the schema: no field
    of it goes unnamed there."""
    readme = (SCHEMA_DIR.parent / "README.md").read_text(encoding="utf-8")
    missing = [
        f"{record}.{field}"
        for record, body in SCHEMA["records"].items()
        for field in body.get("fields", {})
        if f"| `{field}` |" not in readme
    ]
    assert not missing, f"conformance/README.md does not describe {missing}"
