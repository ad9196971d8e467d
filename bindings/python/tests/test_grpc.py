"""rl.grpc's interceptors in real grpcio servers on loopback (sync and
asyncio) serving the health service: 5 calls carry librl's fields, the 6th
fails RESOURCE_EXHAUSTED with them in its trailers, an unreachable store is
UNAVAILABLE, skipped methods pass, streams are limited when they start, and
each method's limited handler is made (and skip asked) once."""

from __future__ import annotations

from concurrent import futures
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio

import rl
import rl.grpc as rlgrpc


def sync_server(interceptor: Any) -> tuple[grpc.Server, health_pb2_grpc.HealthStub]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), interceptors=[interceptor])
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, health_pb2_grpc.HealthStub(grpc.insecure_channel(f"127.0.0.1:{port}"))


def check(stub: health_pb2_grpc.HealthStub) -> tuple[grpc.StatusCode, dict[str, str], dict[str, str]]:
    try:
        _, call = stub.Check.with_call(health_pb2.HealthCheckRequest(), timeout=10)
        return grpc.StatusCode.OK, dict(call.initial_metadata()), dict(call.trailing_metadata())
    except grpc.RpcError as e:
        return e.code(), dict(e.initial_metadata() or ()), dict(e.trailing_metadata() or ())


def test_sync_calls_are_limited_with_librls_fields() -> None:
    with rl.open("memory://?clock=manual") as store:
        server, stub = sync_server(rlgrpc.RateLimitInterceptor(store.limiter(limit="5/h", name="api")))
        try:
            for i in range(1, 6):
                code, initial, _ = check(stub)
                assert code == grpc.StatusCode.OK, i
                assert initial["ratelimit-policy"] == '"api";q=5;w=3600'
                assert initial["ratelimit"] == f'"api";r={5 - i};t={720 * i}'
            code, _, trailing = check(stub)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert trailing["retry-after"] == "720"
            assert trailing["ratelimit"] == '"api";r=0;t=3600'
        finally:
            server.stop(None)


def test_an_outage_is_unavailable_and_skipped_methods_pass() -> None:
    with rl.open("redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100&breaker_failures=0") as store:
        server, stub = sync_server(rlgrpc.RateLimitInterceptor(store.limiter(limit="5/h")))
        skipping, skipped = sync_server(rlgrpc.RateLimitInterceptor(store.limiter(limit="5/h"), skip=lambda m: True))
        try:
            assert check(stub)[0] == grpc.StatusCode.UNAVAILABLE
            assert check(skipped)[0] == grpc.StatusCode.OK
        finally:
            server.stop(None)
            skipping.stop(None)


@pytest.mark.asyncio
async def test_asyncio_calls_and_streams_are_limited() -> None:
    with rl.open("memory://?clock=manual") as store:
        server = grpc.aio.server(interceptors=[rlgrpc.AsyncRateLimitInterceptor(store.limiter(limit="5/h", name="aio"))])
        health_pb2_grpc.add_HealthServicer_to_server(health_aio.HealthServicer(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                for i in range(1, 5):
                    call = stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
                    await call
                    assert dict(await call.initial_metadata())["ratelimit"] == f'"aio";r={5 - i};t={720 * i}'
                watch = stub.Watch(health_pb2.HealthCheckRequest(), timeout=10)
                await watch.read()  # the 5th: a stream, limited when it starts
                watch.cancel()
                with pytest.raises(grpc.aio.AioRpcError) as denied:
                    await stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
                assert denied.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert dict(denied.value.trailing_metadata())["retry-after"] == "720"
        finally:
            await server.stop(None)


@pytest.mark.asyncio
async def test_each_methods_limited_handler_is_made_once_and_acquires_per_call() -> None:
    asked: list[str] = []

    def skip(method: str) -> bool:
        asked.append(method)
        return method.endswith("/Watch")

    with rl.open("memory://?clock=manual") as store:
        interceptor = rlgrpc.AsyncRateLimitInterceptor(store.limiter(limit="5/h", name="once"), skip=skip)
        server = grpc.aio.server(interceptors=[interceptor])
        health_pb2_grpc.add_HealthServicer_to_server(health_aio.HealthServicer(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                for i in range(1, 4):
                    call = stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
                    await call
                    assert dict(await call.initial_metadata())["ratelimit"] == f'"once";r={5 - i};t={720 * i}'
                for _ in range(2):
                    watch = stub.Watch(health_pb2.HealthCheckRequest(), timeout=10)
                    await watch.read()
                    assert "ratelimit" not in dict(await watch.initial_metadata())
                    watch.cancel()
            assert asked == ["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"]
        finally:
            await server.stop(None)


def test_bad_options_are_refused_naming_them() -> None:
    with rl.open("memory://") as store:
        with pytest.raises(TypeError, match="RateLimitInterceptor: limiter: must be an rl.Limiter"):
            rlgrpc.RateLimitInterceptor("x")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="AsyncRateLimitInterceptor: skip: must be a function"):
            rlgrpc.AsyncRateLimitInterceptor(store.limiter(limit="1/s"), skip=3)  # type: ignore[arg-type]
