#!/usr/bin/env python3
"""The client of bench/frameworks/count: client.py's connection and keys,
but each route in a phase of its own, with the server's callgrind counters
dumped after each (callgrind_control), so that each phase's file holds the
instructions the server ran for its requests alone:

  count_client.py URL PID REQUESTS OUT_DIR

URL http://HOST:PORT, or HOST:PORT for a gRPC server (grpc_client.py's
calls: bench.Bench/Bare, Limited, Store, the key as x-api-key and as the
request's bytes; grpcio then has to be importable).

Each route runs ROUNDS times in turn (bare, limited, store, bare, ...),
and counts the median of its rounds: a phase also pays for what the runtime
does on its own threads at the time (a JIT's compiles, a collector's
sweeps), which one round can catch and the next not.
Prints one JSON line: each route's instructions per request, the acquire's
(store - bare: /store is the bare route plus one acquire) and added =
limited - store (what the integration runs beyond the acquire it makes)."""
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.parse

from client import Connection

ROUNDS = 3
TOTALS = re.compile(r"^(?:totals|summary): (\d+)", re.MULTILINE)


def dump(pid, out_dir, name):
    """The server's instructions since its last dump, from a dump of its own."""
    before = set(os.listdir(out_dir))
    subprocess.run(["callgrind_control", f"--dump={name}", str(pid)], check=True, capture_output=True)
    new = [f for f in os.listdir(out_dir) if f not in before]
    if len(new) != 1:
        sys.exit(f"count_client.py: callgrind_control made {len(new)} files for {name}")
    with open(os.path.join(out_dir, new[0])) as f:
        return int(TOTALS.search(f.read()).group(1))


def main():
    url, pid, requests, out_dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if url.startswith("http://"):
        parts = urllib.parse.urlsplit(url)
        # A server may say "listening" before it listens (fastapi_app.py
        # prints once the socket is bound): slow under callgrind.
        for _ in range(600):
            try:
                conn = Connection(parts.hostname, parts.port)
                break
            except ConnectionRefusedError:
                time.sleep(0.1)
        else:
            sys.exit(f"count_client.py: {url} refused every connection")

        def get(route, key):
            status, _ = conn.get(b"/" + route.encode(), key.encode())
            if status != 200:
                sys.exit(f"count_client.py: /{route}: HTTP {status}")
    else:
        import grpc  # only here: the HTTP servers' client runs without it

        channel = grpc.insecure_channel(url)
        grpc.channel_ready_future(channel).result(timeout=600)
        calls = {route: channel.unary_unary(f"/bench.Bench/{route.capitalize()}") for route in ("bare", "limited", "store")}

        def get(route, key):
            calls[route](key.encode(), metadata=(("x-api-key", key),), timeout=600)

    # Warm-up: every route, so that the JIT (Node) or the pools (Go) have
    # settled before anything counts.
    for i in range(max(1000, 2 * requests)):
        for route in ("bare", "limited", "store"):
            get(route, f"w{route[0]}{i}")
    dump(pid, out_dir, "warmup")
    result = {"bench": "frameworks-count", "requests": requests, "rounds": ROUNDS}
    counts = {route: [] for route in ("bare", "limited", "store")}
    for n in range(ROUNDS):
        for route in counts:
            for i in range(requests):
                get(route, f"{route[0]}{n}-{i}")
            counts[route].append(dump(pid, out_dir, f"{route}{n}") / requests)
    for route, rounds in counts.items():
        result[f"{route}_instructions"] = round(statistics.median(rounds))
        result[f"{route}_rounds"] = [round(c) for c in rounds]
    result["acquire_instructions"] = result["store_instructions"] - result["bare_instructions"]
    result["added_instructions"] = result["limited_instructions"] - result["store_instructions"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
