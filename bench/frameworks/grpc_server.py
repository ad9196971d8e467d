"""bench/frameworks' grpcio server (grpc.aio): unary methods bench.Bench/Bare,
bench.Bench/Limited (behind rl.grpc.AsyncRateLimitInterceptor, keyed on the
x-api-key metadata; it skips the other two) and bench.Bench/Store, whose
answer is the microseconds one aacquire of the same limiter took, timed in
the server. Messages are raw bytes (no protobuf): what grpc_client.py sends
and reads; a request's bytes are its key.

  RL_URL=redis://... python grpc_server.py    # prints "listening on 127.0.0.1:PORT"
"""
import asyncio
import os
import time

import grpc

import rl
import rl.grpc

store = rl.open(os.environ.get("RL_URL", "memory://"))
limiter = store.limiter(name="bench-fw", limit="1000000000/1s")


def api_key(context, method):
    return dict(context.invocation_metadata()).get("x-api-key", "anon")


async def ok(request, context):
    return b"ok"


async def store_round_trip(request, context):
    began = time.perf_counter_ns()
    await limiter.aacquire(request)
    return str((time.perf_counter_ns() - began) / 1000).encode()


async def main() -> None:
    server = grpc.aio.server(interceptors=[
        rl.grpc.AsyncRateLimitInterceptor(limiter, key=api_key, skip=lambda method: method != "/bench.Bench/Limited")
    ])
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Bench", {
        "Bare": grpc.unary_unary_rpc_method_handler(ok),
        "Limited": grpc.unary_unary_rpc_method_handler(ok),
        "Store": grpc.unary_unary_rpc_method_handler(store_round_trip),
    })])
    port = server.add_insecure_port(f"127.0.0.1:{os.environ.get('PORT', '0')}")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
