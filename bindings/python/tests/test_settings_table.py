"""The binding's typed copies of librl's settings table say what the table
says (rl.setting_infos(), rl_setting_describe): Store.limiter's keywords are
limiter settings, its docstring names every limiter setting and algorithm,
and the table reads as the C ABI gives it."""

import inspect

import pytest

import rl


def test_the_table_reads_as_librl_gives_it() -> None:
    infos = rl.setting_infos()
    assert len(infos) >= 30
    assert [s.name for s in infos] == list(rl.settings())
    by_name = {s.name: s for s in infos}
    assert by_name["timeout_ms"].scope == "store"
    assert by_name["timeout_ms"].kind == "count" and by_name["timeout_ms"].range[0] == 1
    assert by_name["algorithm"].default == "gcra"
    assert "suppressed" in by_name["algorithm"].choices
    assert by_name["sentinel_password"].secret
    assert all(s.scope in ("store", "limiter") for s in infos)
    assert all((s.range is not None) == (s.kind == "count") for s in infos)


def test_store_limiter_keywords_and_docstring_follow_the_table() -> None:
    limiter_settings = [s for s in rl.setting_infos() if s.scope == "limiter"]
    names = {s.name for s in limiter_settings}
    keywords = [p for p in inspect.signature(rl.Store.limiter).parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY]
    for p in keywords:
        assert p.name in names, f"Store.limiter's keyword {p.name} is not a limiter setting"
    doc = rl.Store.limiter.__doc__ or ""
    for s in limiter_settings:
        assert f"``{s.name}" in doc or f"``{s.name}=" in doc, f"Store.limiter's docstring omits {s.name}"
    algorithms = next(s for s in limiter_settings if s.name == "algorithm").choices
    for a in algorithms:
        assert a in doc, f"Store.limiter's docstring omits the algorithm {a}"


def test_a_limiter_setting_given_by_keyword_reaches_librl() -> None:
    with rl.open("memory://") as store:
        with pytest.raises(rl.InvalidArgumentError, match="deny_cache_keys"):
            store.limiter(limit="1/s", deny_cache_keys=-1)
