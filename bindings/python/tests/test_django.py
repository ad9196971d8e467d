"""rl.django's middleware and decorator in a real Django app served over
HTTP on loopback (wsgiref): the 6th request of 5/1m is 429 with librl's
fields, a decorated view has its own limit and cost, an unreachable store is
503, two stores on one Redis share one limit, and bad settings are refused
naming them."""

from __future__ import annotations

import os
import threading
import urllib.error
import urllib.request
from typing import Iterator
from wsgiref.simple_server import WSGIRequestHandler, make_server

import django
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse
from django.test.utils import override_settings
from django.urls import path

import rl.django

REDIS = os.environ.get("RL_TEST_REDIS_URL", "")
PREFIX = f"dj{os.getpid()}"

LIMITERS = {
    "api": {"url": "memory://?clock=manual", "limit": "5/1m"},
    "bulk": {"url": "memory://?clock=manual", "limit": "10/1m", "algorithm": "fixed_window"},
    "down": {"url": "redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100&breaker_failures=0", "limit": "5/1m"},
}
if REDIS:
    # Two stores (their URLs differ) on one Redis, one limiter name: one limit.
    LIMITERS["shared_a"] = {"url": f"{REDIS}?prefix={PREFIX}&timeout_ms=1000", "limit": "5/1m", "name": "shared"}
    LIMITERS["shared_b"] = {"url": f"{REDIS}?prefix={PREFIX}&timeout_ms=1001", "limit": "5/1m", "name": "shared"}


def index(request: HttpRequest) -> HttpResponse:
    return HttpResponse(f"remaining {request.rate_limit.remaining}")  # type: ignore[attr-defined]


@rl.django.rate_limit("bulk", key="header:X-Api-Key", cost=5)
def bulk(request: HttpRequest) -> HttpResponse:
    return HttpResponse("bulk")


@rl.django.rate_limit("down")
def down(request: HttpRequest) -> HttpResponse:
    return HttpResponse("down")


@rl.django.rate_limit("shared_a", key="header:X-User")
def shared_a(request: HttpRequest) -> HttpResponse:
    return HttpResponse("a")


@rl.django.rate_limit("shared_b", key="header:X-User")
def shared_b(request: HttpRequest) -> HttpResponse:
    return HttpResponse("b")


urlpatterns = [path("", index), path("bulk", bulk), path("down", down), path("a", shared_a), path("b", shared_b)]

if not settings.configured:
    settings.configure(
        DEBUG=False, ALLOWED_HOSTS=["*"], SECRET_KEY="rl-test", ROOT_URLCONF=__name__,
        MIDDLEWARE=["rl.django.RateLimitMiddleware"],
        RL_RATE_LIMIT={"LIMITERS": LIMITERS, "MIDDLEWARE": {"limiter": "api", "key": "header:X-Api-Key"}},
    )
    django.setup()


class Quiet(WSGIRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    from django.core.wsgi import get_wsgi_application

    httpd = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=Quiet)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_port
    httpd.shutdown()


def get(port: int, url_path: str, api_key: str, user: str = "") -> tuple[int, dict[str, str]]:
    headers = {"X-Api-Key": api_key, **({"X-User": user} if user else {})}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/{url_path}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}


def test_the_middleware_limits_every_request(server: int) -> None:
    for i in range(1, 6):
        status, headers = get(server, "", "alice")
        assert status == 200, i
        assert headers["ratelimit-policy"] == '"api";q=5;w=60'
        assert headers["ratelimit"] == f'"api";r={5 - i};t={12 * i}'
    status, headers = get(server, "", "alice")
    assert status == 429 and headers["retry-after"] == "12"


def test_a_decorated_view_has_its_own_limit_and_cost(server: int) -> None:
    assert get(server, "bulk", "carol")[0] == 200
    status, headers = get(server, "bulk", "carol")
    assert status == 200 and headers["ratelimit-policy"] == '"bulk";q=10;w=60'
    assert get(server, "bulk", "carol")[0] == 429


def test_an_unreachable_store_is_503(server: int) -> None:
    assert get(server, "down", "dave")[0] == 503


@pytest.mark.skipif(not REDIS, reason="RL_TEST_REDIS_URL is not set (run under scripts/with-redis)")
def test_two_stores_on_one_redis_share_one_limit(server: int) -> None:
    # /a and /b decide through two stores (two connections) on one Redis,
    # keyed on X-User; a fresh X-Api-Key per request keeps the middleware's
    # own limit out of the way.
    statuses = [get(server, "a" if i % 2 == 0 else "b", f"k{PREFIX}{i}", user="frank")[0] for i in range(7)]
    assert statuses == [200] * 5 + [429] * 2


def test_bad_settings_are_refused_naming_them() -> None:
    with override_settings(RL_RATE_LIMIT={"LIMITERS": {"x": {"url": "memory://", "limit": "bogus"}},
                                          "MIDDLEWARE": {"limiter": "x"}}):
        with pytest.raises(ImproperlyConfigured, match=r"RL_RATE_LIMIT\['LIMITERS'\]\['x'\]: .*bogus"):
            rl.django.RateLimitMiddleware(lambda r: HttpResponse())
    with override_settings(RL_RATE_LIMIT={"LIMITERS": {}, "MIDDLEWARE": {"limiter": "nope"}}):
        with pytest.raises(ImproperlyConfigured, match=r"\['nope'\]: is not configured"):
            rl.django.RateLimitMiddleware(lambda r: HttpResponse())
    with pytest.raises(ImproperlyConfigured, match="key: 'cookie' is not"):
        rl.django.rate_limit("api", key="cookie")


def test_the_example_app_answers_as_its_docstring_says() -> None:
    # Its own process: the example configures Django's settings, once a process.
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[3] / "examples" / "python" / "django_app.py"
    env = {**os.environ, "RL_URL": f"{REDIS}?prefix={PREFIX}ex" if REDIS else "memory://"}
    proc = subprocess.Popen([sys.executable, str(example), "0"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1])
        for i in range(1, 6):
            status, headers = get(port, "hello", "erin")
            assert status == 200 and headers["ratelimit"].startswith(f'"api";r={5 - i};'), (i, headers)
        status, headers = get(port, "hello", "erin")
        assert status == 429 and "retry-after" in headers
        assert [get(port, "bulk", f"bulk{PREFIX}")[0] for _ in range(3)] == [200, 200, 429]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
