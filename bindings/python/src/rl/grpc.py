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
(e.g. health checks); it is asked once per method, as each method's limited
handler is made once, on its first call. Needs grpcio (not a dependency of rl).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

import grpc  # type: ignore[import-untyped]
import grpc.aio  # type: ignore[import-untyped]

from .decision import Decision
from .errors import RateLimitError
from .http import check_options, fields_of, is_outage
from .limiter import Limiter

KeyOf = Callable[[Any, str], Any]

# Wrapped handlers kept per method (see _Options.handler): at most this many
# methods, so a generic handler that answers any name cannot grow it forever.
_MAX_CACHED_METHODS = 4096


def peer_address(context: Any, method: str) -> str:
    """The calling peer's host: "ipv4:127.0.0.1:5000" -> "127.0.0.1"."""
    peer = context.peer() or "unknown"
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        host = rest.rsplit(":", 1)[0]
        return host.strip("[]")
    return peer


def _refusal(error: RateLimitError) -> tuple[grpc.StatusCode, str]:
    """The status of a call whose acquire failed."""
    if is_outage(error):
        return grpc.StatusCode.UNAVAILABLE, "rate limiter store unreachable"
    return grpc.StatusCode.INTERNAL, f"rate limiter failed: {error}"


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
        self.cost: Optional[Callable[[str], int]] = cost
        self.skip: Callable[[str], bool] = skip or (lambda method: False)
        self.fields = fields_of(limiter)
        self._handlers: dict[str, tuple[Any, Any]] = {}

    def handler(self, method: str, handler: Any, wrap: Callable[[Any, str], Any]) -> Any:
        """handler limited (wrap(handler, method)), or itself when skip(method):
        made once per method and handler, not per call (a new method handler
        and its closures per call otherwise)."""
        known = self._handlers.get(method)
        if known is not None and known[0] is handler:
            return known[1]
        limited = handler if self.skip(method) else wrap(handler, method)
        if len(self._handlers) < _MAX_CACHED_METHODS:
            self._handlers[method] = (handler, limited)
        return limited


class RateLimitInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    """Limits every call of a grpc.server (sync)."""

    def __init__(self, limiter: Limiter, *, key: Optional[KeyOf] = None, cost: Optional[Callable[[str], int]] = None,
                 skip: Optional[Callable[[str], bool]] = None) -> None:
        self._o = _Options("rl.grpc.RateLimitInterceptor", limiter, key, cost, skip)

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = continuation(details)
        if handler is None:
            return None
        return self._o.handler(details.method, handler, self._wrap)

    def _wrap(self, handler: Any, method: str) -> Any:
        o = self._o
        limiter, key_of, cost_of, fields = o.limiter, o.key, o.cost, o.fields

        def limited(behaviour: Callable[..., Any]) -> Callable[..., Any]:
            def call(request_or_iterator: Any, context: Any) -> Any:
                try:
                    cost = 1 if cost_of is None else cost_of(method)
                    decision = limiter.acquire(key_of(context, method), cost)
                    metadata = fields.as_pairs(fields.values(decision))
                except RateLimitError as e:
                    context.abort(*_refusal(e))
                if not decision.allowed:
                    if metadata:
                        context.set_trailing_metadata(metadata)
                    context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "rate limit exceeded")
                if metadata:
                    context.send_initial_metadata(metadata)
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
        if handler is None:
            return None
        return self._o.handler(details.method, handler, self._wrap)

    def _wrap(self, handler: Any, method: str) -> Any:
        o = self._o
        limiter, key_of, cost_of, fields = o.limiter, o.key, o.cost, o.fields

        async def check(context: Any) -> None:
            # The acquire's future is awaited here: no coroutine of its own.
            try:
                cost = 1 if cost_of is None else cost_of(method)
                pending = limiter._acquire_started(key_of(context, method), cost)
                decision = pending if isinstance(pending, Decision) else await pending
                metadata = fields.as_pairs(fields.values(decision))
            except RateLimitError as e:
                await context.abort(*_refusal(e))
            if not decision.allowed:
                if metadata:
                    context.set_trailing_metadata(metadata)
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "rate limit exceeded")
            if metadata:
                # grpc.aio sends initial metadata as a batch of its own, awaited:
                # its API has no way to send it with the response.
                await context.send_initial_metadata(metadata)

        def limited(behaviour: Callable[..., Any]) -> Callable[..., Any]:
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
