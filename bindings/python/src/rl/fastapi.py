"""A FastAPI dependency that limits one route (or a router):

    limit = rl.fastapi.RateLimit(limiter, key=lambda request: request.headers.get("x-api-key", "anon"))
    @app.get("/items", dependencies=[Depends(limit)])       # or: decision = Depends(limit)

It answers as rl.asgi.RateLimitMiddleware does: a denial raises
HTTPException 429 with the RateLimit-Policy, RateLimit and Retry-After
fields (librl's rendering), a store outage under on_failure="closed" 503; a
request let through gets RateLimit-Policy and RateLimit on its response and
the decision as the dependency's value. Needs fastapi (not a dependency of rl).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

from fastapi import HTTPException, Request, Response

from .decision import Decision
from .errors import RateLimitError
from .http import CostFunc, KeyFunc, check_options, fields_of, is_outage
from .limiter import Limiter


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class RateLimit:
    """A dependency: ``Depends(RateLimit(limiter, key=..., cost=...))``."""

    def __init__(self, limiter: Limiter, *, key: Optional[KeyFunc] = None, cost: Optional[CostFunc] = None) -> None:
        check_options("rl.fastapi.RateLimit", limiter, key, cost)
        self.limiter = limiter
        self.key: Callable[[Any], Any] = key or client_address
        self.cost: Optional[Callable[[Any], Any]] = cost
        self._fields = fields_of(limiter)

    async def __call__(self, request: Request, response: Response) -> Decision:
        # One coroutine per request, this one: the acquire's future is
        # awaited here, not through adecide's and aacquire's.
        key = self.key(request)
        if key.__class__ is not str and key.__class__ is not bytes and inspect.isawaitable(key):
            key = await key
        cost: Any = 1
        if self.cost is not None:
            cost = self.cost(request)
            if inspect.isawaitable(cost):
                cost = await cost
        try:
            pending = self.limiter._acquire_started(key, cost)
            decision = pending if isinstance(pending, Decision) else await pending
        except RateLimitError as e:
            if is_outage(e):
                raise HTTPException(503, "Service Unavailable: rate limiter store unreachable") from None
            raise
        fields = self._fields
        values = fields.values(decision)
        if not decision.allowed:
            raise HTTPException(429, "Too Many Requests", headers=fields.named(values))
        if values[0] is not None or values[1] is not None:
            headers = response.headers
            raw = headers.raw
            if raw:  # another dependency's fields: set them over theirs, as update does
                headers.update(fields.named(values))
            else:
                raw.extend(fields.as_raw(values))
        return decision
