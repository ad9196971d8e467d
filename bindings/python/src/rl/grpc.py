"""gRPC server interceptors (grpcio, sync and asyncio):

    server = grpc.server(pool, interceptors=[rl.grpc.RateLimitInterceptor(limiter)])
    server = grpc.aio.server(interceptors=[rl.grpc.AsyncRateLimitInterceptor(limiter)])

Every call acquires ``cost(method)`` units (default 1) of ``key(context,
method)`` (default: the peer's address) when it starts. Over the limit it
fails RESOURCE_EXHAUSTED with the RateLimit fields (ratelimit-policy,
ratelimit, retry-after: librl's rendering, the bytes the HTTP middlewares
send) in its trailing metadata; a call let through gets ratelimit-policy and
ratelimit as initial metadata. A store outage under on_failure="closed" is
UNAVAILABLE, never RESOURCE_EXHAUSTED; "open" lets calls through without
fields; any other failure is INTERNAL. ``skip(method)`` exempts methods
(e.g. health checks). Needs grpcio (not a dependency of rl).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

import grpc  # type: ignore[import-untyped]
import grpc.aio  # type: ignore[import-untyped]

from .http import Outcome, adecide, check_options, decide
from .limiter import Limiter

KeyOf = Callable[[Any, str], Any]


def peer_address(context: Any, method: str) -> str:
    """The calling peer's host: "ipv4:127.0.0.1:5000" -> "127.0.0.1"."""
    peer = context.peer() or "unknown"
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        host = rest.rsplit(":", 1)[0]
        return host.strip("[]")
    return peer


def _metadata(outcome: Outcome) -> tuple[tuple[str, str], ...]:
    return tuple((k.lower(), v) for k, v in outcome.headers.items())


def _refusal(outcome: Outcome) -> Optional[tuple[grpc.StatusCode, str]]:
    if outcome.kind == "outage":
        return grpc.StatusCode.UNAVAILABLE, "rate limiter store unreachable"
    if outcome.kind == "error":
        return grpc.StatusCode.INTERNAL, f"rate limiter failed: {outcome.error}"
    if outcome.kind == "denied":
        return grpc.StatusCode.RESOURCE_EXHAUSTED, "rate limit exceeded"
    return None


def _wrap(handler: Any, limited: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Any:
    """The method handler with each of its behaviours limited."""
    for kind, factory in (
        ("unary_unary", grpc.unary_unary_rpc_method_handler),
        ("unary_stream", grpc.unary_stream_rpc_method_handler),
        ("stream_unary", grpc.stream_unary_rpc_method_handler),
        ("stream_stream", grpc.stream_stream_rpc_method_handler),
    ):
        behaviour = getattr(handler, kind)
        if behaviour is not None:
            return factory(limited(behaviour), request_deserializer=handler.request_deserializer,
                           response_serializer=handler.response_serializer)
    return handler


class _Options:
    def __init__(self, what: str, limiter: Limiter, key: Optional[KeyOf], cost: Optional[Callable[[str], int]],
                 skip: Optional[Callable[[str], bool]]) -> None:
        check_options(what, limiter, key, cost)
        if skip is not None and not callable(skip):
            raise TypeError(f"{what}: skip: must be a function of the method name")
        self.limiter = limiter
        self.key: KeyOf = key or peer_address
        self.cost: Callable[[str], int] = cost or (lambda method: 1)
        self.skip: Callable[[str], bool] = skip or (lambda method: False)


class RateLimitInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    """Limits every call of a grpc.server (sync)."""

    def __init__(self, limiter: Limiter, *, key: Optional[KeyOf] = None, cost: Optional[Callable[[str], int]] = None,
                 skip: Optional[Callable[[str], bool]] = None) -> None:
        self._o = _Options("rl.grpc.RateLimitInterceptor", limiter, key, cost, skip)

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = continuation(details)
        method = details.method
        if handler is None or self._o.skip(method):
            return handler
        o = self._o

        def limited(behaviour: Callable[..., Any]) -> Callable[..., Any]:
            def call(request_or_iterator: Any, context: Any) -> Any:
                outcome = decide(o.limiter, o.key(context, method), o.cost(method))
                refusal = _refusal(outcome)
                if refusal is not None:
                    if outcome.headers:
                        context.set_trailing_metadata(_metadata(outcome))
                    context.abort(*refusal)
                if outcome.headers:
                    context.send_initial_metadata(_metadata(outcome))
                return behaviour(request_or_iterator, context)

            return call

        return _wrap(handler, limited)


class AsyncRateLimitInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Limits every call of a grpc.aio.server, without blocking its loop."""

    def __init__(self, limiter: Limiter, *, key: Optional[KeyOf] = None, cost: Optional[Callable[[str], int]] = None,
                 skip: Optional[Callable[[str], bool]] = None) -> None:
        self._o = _Options("rl.grpc.AsyncRateLimitInterceptor", limiter, key, cost, skip)

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = await continuation(details)
        method = details.method
        if handler is None or self._o.skip(method):
            return handler
        o = self._o

        def limited(behaviour: Callable[..., Any]) -> Callable[..., Any]:
            async def check(context: Any) -> None:
                outcome = await adecide(o.limiter, o.key(context, method), o.cost(method))
                refusal = _refusal(outcome)
                if refusal is not None:
                    if outcome.headers:
                        context.set_trailing_metadata(_metadata(outcome))
                    await context.abort(*refusal)
                if outcome.headers:
                    await context.send_initial_metadata(_metadata(outcome))

            # A streaming handler either yields (an async generator) or
            # writes with context.write and returns: keep its shape.
            if inspect.isasyncgenfunction(behaviour):
                async def stream(request_or_iterator: Any, context: Any) -> Any:
                    await check(context)
                    async for response in behaviour(request_or_iterator, context):
                        yield response

                return stream

            async def call(request_or_iterator: Any, context: Any) -> Any:
                await check(context)
                result = behaviour(request_or_iterator, context)
                return await result if inspect.isawaitable(result) else result

            return call

        return _wrap(handler, limited)
