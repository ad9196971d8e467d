"""Django: a middleware that limits every request and a decorator that limits
one view, configured in settings.py:

    RL_RATE_LIMIT = {
        "URL": "redis://127.0.0.1:6379",          # the store of every limiter without its own
        "LIMITERS": {
            "api": {"limit": "100/1m", "algorithm": "gcra"},   # any librl limiter settings,
            "bulk": {"limit": "10/1m", "url": "redis://..."},  # and a store URL of its own
        },
        "MIDDLEWARE": {"limiter": "api", "key": "header:X-Api-Key"},  # for rl.django.RateLimitMiddleware
    }
    MIDDLEWARE = [..., "rl.django.RateLimitMiddleware"]

    @rl.django.rate_limit("bulk", key="user", cost=5)
    def bulk_view(request): ...

A key is "ip" (REMOTE_ADDR, the default), "header:<Name>", "user" (the
authenticated user's pk, else the address) or a function of the request. A
denial is 429 with the RateLimit-Policy, RateLimit and Retry-After fields
(librl's rendering, the bytes every binding sends); a request let through
carries the first two and its decision in ``request.rate_limit``. A store
outage under on_failure="closed" is 503; "open" lets it through without
fields; any other failure is raised. Stores and limiters are made once, at
the first use of each name; a bad setting raises ImproperlyConfigured
naming it, at startup for the middleware. Needs Django (not a dependency
of rl).
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Optional, Union

from django.conf import settings  # type: ignore[import-untyped]
from django.core.exceptions import ImproperlyConfigured  # type: ignore[import-untyped]
from django.http import HttpRequest, HttpResponse  # type: ignore[import-untyped]

from .errors import RateLimitError
from .http import STORE_UNREACHABLE, TOO_MANY_REQUESTS, decide
from .limiter import Limiter
from .store import Store, open as open_store

KeySpec = Union[str, Callable[[HttpRequest], str]]

_lock = threading.Lock()
_stores: dict[str, Store] = {}
_limiters: dict[str, Limiter] = {}


def _config() -> dict[str, Any]:
    config = getattr(settings, "RL_RATE_LIMIT", None)
    if not isinstance(config, dict):
        raise ImproperlyConfigured("RL_RATE_LIMIT: must be a dict with LIMITERS (see rl.django)")
    return config


def limiter(name: str) -> Limiter:
    """The limiter RL_RATE_LIMIT["LIMITERS"][name] describes, made once."""
    with _lock:
        if name in _limiters:
            return _limiters[name]
        config = _config()
        spec = config.get("LIMITERS", {}).get(name)
        if not isinstance(spec, dict):
            raise ImproperlyConfigured(f"RL_RATE_LIMIT['LIMITERS'][{name!r}]: is not configured")
        spec = dict(spec)
        url = spec.pop("url", config.get("URL"))
        if not isinstance(url, str):
            raise ImproperlyConfigured(f"RL_RATE_LIMIT['LIMITERS'][{name!r}]: needs a url, or RL_RATE_LIMIT['URL']")
        try:
            if url not in _stores:
                _stores[url] = open_store(url)
            made = _stores[url].limiter(name=spec.pop("name", name), **spec)
        except RateLimitError as e:
            raise ImproperlyConfigured(f"RL_RATE_LIMIT['LIMITERS'][{name!r}]: {e}") from e
        _limiters[name] = made
        return made


def _key_function(spec: KeySpec, where: str) -> Callable[[HttpRequest], str]:
    if callable(spec):
        return spec

    def address(request: HttpRequest) -> str:
        return str(request.META.get("REMOTE_ADDR") or "unknown")

    if spec == "ip":
        return address
    if spec == "user":
        return lambda r: f"user:{r.user.pk}" if getattr(r, "user", None) and r.user.is_authenticated else address(r)
    if isinstance(spec, str) and spec.startswith("header:") and len(spec) > len("header:"):
        header = spec[len("header:"):]
        return lambda r: r.headers.get(header) or address(r)
    raise ImproperlyConfigured(f"{where}: key: {spec!r} is not 'ip', 'user', 'header:<Name>' or a function")


def _answer(limiter: Limiter, key: str, cost: int, request: HttpRequest,
            view: Callable[[HttpRequest], HttpResponse]) -> HttpResponse:
    outcome = decide(limiter, key, cost)
    if outcome.kind == "error":
        assert outcome.error is not None
        raise outcome.error
    if outcome.kind == "outage":
        return HttpResponse(STORE_UNREACHABLE, status=503, content_type="text/plain; charset=utf-8")
    if outcome.kind == "denied":
        response = HttpResponse(TOO_MANY_REQUESTS, status=429, content_type="text/plain; charset=utf-8")
    else:
        request.rate_limit = outcome.decision
        response = view(request)
    # A view limited again inside (the decorator under the middleware) set
    # its own fields: the innermost, most specific limit's stay.
    for name, value in outcome.headers.items():
        if name not in response:
            response[name] = value
    return response


class RateLimitMiddleware:
    """Limits every request with RL_RATE_LIMIT['MIDDLEWARE']'s limiter."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        options = _config().get("MIDDLEWARE")
        where = "RL_RATE_LIMIT['MIDDLEWARE']"
        if not isinstance(options, dict) or not isinstance(options.get("limiter"), str):
            raise ImproperlyConfigured(f"{where}: must be a dict naming a limiter")
        self.limiter = limiter(options["limiter"])  # made now: a bad setting stops startup
        self.key = _key_function(options.get("key", "ip"), where)
        self.cost = options.get("cost", 1)
        if not isinstance(self.cost, int):
            raise ImproperlyConfigured(f"{where}: cost: must be an int")

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return _answer(self.limiter, self.key(request), self.cost, request, self.get_response)


def rate_limit(name: str, *, key: KeySpec = "ip", cost: int = 1) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Limits one view with the limiter RL_RATE_LIMIT['LIMITERS'][name]."""
    where = f"rl.django.rate_limit({name!r})"
    key_of = _key_function(key, where)
    if not isinstance(cost, int):
        raise ImproperlyConfigured(f"{where}: cost: must be an int")

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            return _answer(limiter(name), key_of(request), cost, request, lambda r: view(r, *args, **kwargs))

        return limited

    return decorator
