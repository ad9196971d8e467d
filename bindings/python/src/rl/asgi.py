"""ASGI middleware for Starlette, FastAPI and any ASGI app:

    app.add_middleware(rl.asgi.RateLimitMiddleware, limiter=limiter,
                       key=lambda scope: dict(scope["headers"]).get(b"x-api-key", b"anon"))

Every HTTP request acquires ``cost(scope)`` units (default 1) of
``key(scope)`` (default: the client's address). A denial is 429 with the
RateLimit-Policy, RateLimit and Retry-After fields (rl.http: librl's
rendering, the bytes every binding sends); a request let through carries
RateLimit-Policy and RateLimit, and its decision is in
``scope["state"]["rate_limit"]`` (Starlette's ``request.state.rate_limit``).
A store outage under on_failure="closed" is 503, never 429; "open" lets
the request through without fields; any other failure is raised to the
server (500). Other scopes (websocket, lifespan) pass through. Per-route
limits in FastAPI: rl.fastapi.RateLimit.
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, MutableMapping, Optional

from .decision import Decision
from .errors import RateLimitError
from .http import STORE_UNREACHABLE, TOO_MANY_REQUESTS, CostFunc, KeyFunc, check_options, fields_of, is_outage
from .limiter import Limiter

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def client_address(scope: Scope) -> str:
    """The client's host as the server saw it ("unknown" without one)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def _answer(send: Send, status: int, fields: list[tuple[bytes, bytes]], body: str) -> None:
    raw = [(b"content-type", b"text/plain; charset=utf-8"), *fields]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body.encode()})


class RateLimitMiddleware:
    """Limits every HTTP request of the app it wraps with one limiter."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        limiter: Limiter,
        key: Optional[KeyFunc] = None,
        cost: Optional[CostFunc] = None,
    ) -> None:
        check_options("rl.asgi.RateLimitMiddleware", limiter, key, cost)
        self.app = app
        self.limiter = limiter
        self.key: Callable[[Any], Any] = key or client_address
        self.cost: Optional[Callable[[Any], Any]] = cost
        self._fields = fields_of(limiter)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # The acquire's future is awaited here, in no coroutine of its own.
        key = self.key(scope)
        if key.__class__ is not str and key.__class__ is not bytes and inspect.isawaitable(key):
            key = await key
        cost: Any = 1
        if self.cost is not None:
            cost = self.cost(scope)
            if inspect.isawaitable(cost):
                cost = await cost
        decision: Optional[Decision] = None
        try:
            pending = self.limiter._acquire_started(key, cost)
            decision = pending if isinstance(pending, Decision) else await pending
        except RateLimitError as e:
            if not is_outage(e):
                raise
        if decision is None:
            await _answer(send, 503, [], STORE_UNREACHABLE)
            return
        values = self._fields.values(decision)
        fields = self._fields.as_raw(values)
        if not decision.allowed:
            await _answer(send, 429, fields, TOO_MANY_REQUESTS)
            return
        scope.setdefault("state", {})["rate_limit"] = decision

        async def send_with_fields(message: Message) -> None:
            if message["type"] == "http.response.start" and fields:
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + fields
            await send(message)

        await self.app(scope, receive, send_with_fields)
