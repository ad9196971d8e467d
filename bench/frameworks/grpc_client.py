#!/usr/bin/env python3
"""The loopback gRPC client of bench/frameworks/run, client.py's twin for the
gRPC servers: one channel (one HTTP/2 connection), sequential unary calls
to bench.Bench/Bare, bench.Bench/Limited and bench.Bench/Store, the three in
every order in rotation, each with a key no call made yet (as metadata
x-api-key, and as the request's bytes, which Store acquires); Store answers
the microseconds one of rl's own acquires took, timed inside the server.
Prints one JSON line, client.py's fields:

  grpc_client.py HOST:PORT FRAMEWORK REQUESTS
"""
import sys
import time

import grpc

from rotation import measure


def main():
    target, framework, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
    routes = {"bare": "Bare", "limited": "Limited", "store": "Store"}
    with grpc.insecure_channel(target) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        calls = {route: channel.unary_unary(f"/bench.Bench/{method}") for route, method in routes.items()}
        # Limited is behind the interceptor: it says so in the fields it sends.
        _, call = calls["limited"].with_call(b"check", metadata=(("x-api-key", "check"),), timeout=30)
        if not any(k == "ratelimit-policy" for k, _ in call.initial_metadata()):
            sys.exit(f"grpc_client.py: {framework}: Limited answered without ratelimit-policy: not limited")

        def timed_call(route, key):
            began = time.perf_counter_ns()
            answer = calls[route](key.encode(), metadata=(("x-api-key", key),), timeout=30)
            return (time.perf_counter_ns() - began) / 1000, answer

        measure(framework, requests, timed_call)


if __name__ == "__main__":
    main()
