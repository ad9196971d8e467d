"""A FastAPI dependency that limits one route (or a router):

    limit = rl.fastapi.RateLimit(limiter, key=lambda request: request.headers.get("x-api-key", "anon"))
    @app.get("/items", dependencies=[Depends(limit)])       # or: decision = Depends(limit)

    @app.get("/items")                                      # or: the endpoint wrapped,
    @limit.wrap                                             # no dependency to solve
    async def items() -> list[str]: ...

It answers as rl.asgi.RateLimitMiddleware does: a denial raises
HTTPException 429 with the RateLimit-Policy, RateLimit and Retry-After
fields (librl's rendering), a store outage under on_failure="closed" 503; a
request let through gets RateLimit-Policy and RateLimit on its response and
the decision as the dependency's value. Needs fastapi (not a dependency of rl).

limit.wrap(endpoint) answers the same, in the endpoint itself: FastAPI
solves a dependency on every request (a sub-dependant's values, cache key
and kind: tens of thousands of instructions, bench/README.md); the wrapped
endpoint only takes the request and response as parameters more.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

from fastapi import HTTPException, Request, Response
from starlette.concurrency import run_in_threadpool

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

    def wrap(self, endpoint: Callable[..., Any]) -> Callable[..., Any]:
        """The endpoint limited in itself: ``@app.get(...)`` over ``@limit.wrap``.
        Its signature gains the request and response parameters it lacks
        (keyword-only, names of rl's own), so that FastAPI passes them."""
        what = "rl.fastapi.RateLimit.wrap"
        if not callable(endpoint):
            raise TypeError(f"{what}: endpoint: must be a function")
        if inspect.isgeneratorfunction(endpoint) or inspect.isasyncgenfunction(endpoint):
            # FastAPI streams a generator endpoint by its kind, which a wrapper hides.
            raise TypeError(f"{what}: endpoint: a generator (streaming) endpoint: limit it with Depends instead")
        # eval_str: the wrapper lives in this module, where FastAPI would
        # resolve string annotations (from __future__ import annotations).
        signature = inspect.signature(endpoint, eval_str=True)
        params = list(signature.parameters.values())
        request_name = _param_of(params, Request)
        response_name = _param_of(params, Response)
        added = []
        if request_name is None:
            request_name = "_rl_request"
            added.append(inspect.Parameter(request_name, inspect.Parameter.KEYWORD_ONLY, annotation=Request))
        if response_name is None:
            response_name = "_rl_response"
            added.append(inspect.Parameter(response_name, inspect.Parameter.KEYWORD_ONLY, annotation=Response))
        variadic = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
        params = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD] + added + variadic
        pop_request = request_name == "_rl_request"
        pop_response = response_name == "_rl_response"
        is_coroutine = inspect.iscoroutinefunction(endpoint)

        async def limited(**values: Any) -> Any:
            request = values.pop(request_name) if pop_request else values[request_name]
            response = values.pop(response_name) if pop_response else values[response_name]
            await self(request, response)
            if is_coroutine:
                return await endpoint(**values)
            return await run_in_threadpool(endpoint, **values)

        # Not functools.wraps: its __wrapped__ would lead FastAPI to the
        # endpoint's own signature and kind.
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            if hasattr(endpoint, name):
                setattr(limited, name, getattr(endpoint, name))
        limited.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        return limited


def _param_of(params: list[inspect.Parameter], kind: type) -> Optional[str]:
    """The name of the parameter FastAPI passes the request (or response) to."""
    for p in params:
        if isinstance(p.annotation, type) and issubclass(p.annotation, kind):
            return p.name
    return None
