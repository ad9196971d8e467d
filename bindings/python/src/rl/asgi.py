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

from .http import STORE_UNREACHABLE, TOO_MANY_REQUESTS, CostFunc, KeyFunc, adecide, check_options
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


async def _call(f: Callable[[Any], Any], arg: Any) -> Any:
    value = f(arg)
    return await value if inspect.isawaitable(value) else value


async def _answer(send: Send, status: int, headers: dict[str, str], body: str) -> None:
    raw = [(b"content-type", b"text/plain; charset=utf-8")]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
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
        self.cost: Callable[[Any], Any] = cost or (lambda scope: 1)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        outcome = await adecide(self.limiter, await _call(self.key, scope), await _call(self.cost, scope))
        if outcome.kind == "error":
            assert outcome.error is not None
            raise outcome.error
        if outcome.kind == "outage":
            await _answer(send, 503, {}, STORE_UNREACHABLE)
            return
        if outcome.kind == "denied":
            await _answer(send, 429, outcome.headers, TOO_MANY_REQUESTS)
            return
        scope.setdefault("state", {})["rate_limit"] = outcome.decision
        fields = [(k.lower().encode(), v.encode()) for k, v in outcome.headers.items()]

        async def send_with_fields(message: Message) -> None:
            if message["type"] == "http.response.start" and fields:
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + fields
            await send(message)

        await self.app(scope, receive, send_with_fields)
