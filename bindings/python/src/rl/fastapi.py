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
from .http import CostFunc, KeyFunc, adecide, check_options
from .limiter import Limiter


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class RateLimit:
    """A dependency: ``Depends(RateLimit(limiter, key=..., cost=...))``."""

    def __init__(self, limiter: Limiter, *, key: Optional[KeyFunc] = None, cost: Optional[CostFunc] = None) -> None:
        check_options("rl.fastapi.RateLimit", limiter, key, cost)
        self.limiter = limiter
        self.key: Callable[[Any], Any] = key or client_address
        self.cost: Callable[[Any], Any] = cost or (lambda request: 1)

    async def __call__(self, request: Request, response: Response) -> Decision:
        key = self.key(request)
        cost = self.cost(request)
        key = await key if inspect.isawaitable(key) else key
        cost = await cost if inspect.isawaitable(cost) else cost
        outcome = await adecide(self.limiter, key, cost)
        if outcome.kind == "error":
            assert outcome.error is not None
            raise outcome.error
        if outcome.kind == "outage":
            raise HTTPException(503, "Service Unavailable: rate limiter store unreachable")
        if outcome.kind == "denied":
            raise HTTPException(429, "Too Many Requests", headers=outcome.headers)
        response.headers.update(outcome.headers)
        assert outcome.decision is not None
        return outcome.decision
