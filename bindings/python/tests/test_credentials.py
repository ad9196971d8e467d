"""A store's credentials never show: every URL shape of
tests/data/url_shapes.yaml (the table every binding's tests share) on every
surface: store.url, repr/str/vars of the store, its limiter and a LangChain
limiter, the metrics, and the errors of a failed call and of a refused open."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import pytest
import yaml

import rl
from rl.langchain import RedisRateLimiter

SHAPES_FILE = Path(__file__).resolve().parents[3] / "tests" / "data" / "url_shapes.yaml"
SHAPES: list[dict[str, Any]] = yaml.safe_load(SHAPES_FILE.read_text())["shapes"]


def shown(value: Any) -> str:
    """Every common way of printing value, as one string to search."""
    texts = [repr(value), str(value), f"{value!r:}"]
    if hasattr(value, "__dict__"):
        texts.append(repr(vars(value)))
    if isinstance(value, BaseException):
        texts.append(repr(value.args))
        texts.append("".join(traceback.format_exception(value)))
    return "\n".join(texts)


def assert_no_secret(shape: dict[str, Any], text: str, surface: str) -> None:
    for secret in shape["secrets"]:
        assert secret not in text, f"{shape['name']}: {surface} shows {secret!r}: {text}"


def test_the_table_has_every_shape() -> None:
    assert len(SHAPES) >= 12


@pytest.mark.parametrize("shape", SHAPES, ids=[s["name"] for s in SHAPES])
def test_every_surface_shows_only_librls_display_form(shape: dict[str, Any]) -> None:
    if shape.get("opens", True) is False:
        with pytest.raises(rl.InvalidArgumentError) as refused:
            rl.open(shape["url"])
        assert_no_secret(shape, shown(refused.value), "the refused open")
        return
    with rl.open(shape["url"]) as store:
        assert store.url == shape["display"]
        limiter = store.limiter(limit="5/s", name="credentials")
        try:  # on closed ports a call fails as an outage; memory:// decides
            outcome: Any = limiter.acquire("k")
        except rl.RateLimitError as e:
            outcome = e
        assert_no_secret(shape, shown(outcome), "a call")
        for value in (store, limiter, {"store": store, "limiter": limiter}):
            assert_no_secret(shape, shown(value), "the store or limiter")
        assert_no_secret(shape, store.metrics(), "the metrics")
    assert_no_secret(shape, shown(store), "the closed store")
    with pytest.raises(rl.InvalidArgumentError) as refused:
        rl.open(shape["refused"])
    assert_no_secret(shape, shown(refused.value), "the refused open")


@pytest.mark.parametrize("shape", [s for s in SHAPES if s.get("opens", True)], ids=lambda s: s["name"])
def test_a_langchain_limiter_never_shows_a_secret(shape: dict[str, Any]) -> None:
    limiter = RedisRateLimiter(redis_url=shape["url"], fallback_to_memory=False)
    try:
        assert_no_secret(shape, shown(limiter), "the LangChain limiter")
    finally:
        limiter._store.close()


async def test_aopen_shows_the_display_form_too() -> None:
    shape = next(s for s in SHAPES if s["secrets"] and s.get("opens", True))
    async with await rl.aopen(shape["url"]) as store:
        assert store.url == shape["display"]
