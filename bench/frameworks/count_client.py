#!/usr/bin/env python3
"""The client of bench/frameworks/count: client.py's connection and keys,
but each route in a phase of its own, with the server's callgrind counters
dumped after each (callgrind_control), so that each phase's file holds the
instructions the server ran for its requests alone:

  count_client.py URL PID REQUESTS OUT_DIR

Prints one JSON line: each route's instructions per request, the acquire's
(store - bare: /store is the bare route plus one acquire) and added =
limited - store (what the integration runs beyond the acquire it makes)."""
import json
import os
import re
import subprocess
import sys
import urllib.parse

from client import Connection

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
    parts = urllib.parse.urlsplit(url)
    conn = Connection(parts.hostname, parts.port)

    def get(route, key):
        status, _ = conn.get(b"/" + route.encode(), key.encode())
        if status != 200:
            sys.exit(f"count_client.py: /{route}: HTTP {status}")

    # Warm-up: every route, so that the JIT (Node) or the pools (Go) have
    # settled before anything counts.
    for i in range(max(200, requests // 2)):
        for route in ("bare", "limited", "store"):
            get(route, f"w{route[0]}{i}")
    dump(pid, out_dir, "warmup")
    result = {"bench": "frameworks-count", "requests": requests}
    for route in ("bare", "limited", "store"):
        for i in range(requests):
            get(route, f"{route[0]}{i}")
        result[f"{route}_instructions"] = round(dump(pid, out_dir, route) / requests)
    result["acquire_instructions"] = result["store_instructions"] - result["bare_instructions"]
    result["added_instructions"] = result["limited_instructions"] - result["store_instructions"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
