#!/usr/bin/env python3
"""The Python worker of the shared-limit demo (scripts/demo):

    python examples/python/demo_worker.py URL NAME LIMIT KEY ATTEMPTS

Opens a store at URL and a gcra limiter named NAME with limit LIMIT, prints
"ready", waits for the start signal (a line on stdin, or its end), makes
ATTEMPTS sequential acquire(KEY, 1) calls and prints one line of JSON:

    {"worker":"python","pid":1234,"admitted":37,"denied":63,
     "first_call_us":1764133200000000,"last_return_us":1764133200050000,"retry_after_ms":[1200,36000]}

retry_after_ms is [smallest, largest] over the denials ([] when none); the
times are wall-clock microseconds. The protocol is in examples/README.md.
Errors go to stderr with exit code 1.
"""

import json
import os
import sys
import time

import rl


def wall_clock_us() -> int:
    """Wall-clock microseconds, comparable with the other workers' (C, Node, Go)."""
    return time.time_ns() // 1000


def main(argv: list[str]) -> int:
    if len(argv) != 5 or not argv[4].isdigit():
        print("usage: demo_worker.py URL NAME LIMIT KEY ATTEMPTS", file=sys.stderr)
        return 1
    url, name, limit, key, attempts = argv[0], argv[1], argv[2], argv[3], int(argv[4])
    with rl.open(url) as store:
        limiter = store.limiter(algorithm="gcra", name=name, limit=limit)
        limiter.peek(key, 0)  # records nothing: the connection is up before "ready"
        print("ready", flush=True)
        sys.stdin.readline()  # the start signal: a line, or the end of stdin
        admitted = 0
        retry_after = []
        first_call_us = wall_clock_us()
        for _ in range(attempts):
            decision = limiter.acquire(key, 1)
            if decision.allowed:
                admitted += 1
            else:
                retry_after.append(decision.retry_after)
        last_return_us = wall_clock_us()
    report = {
        "worker": "python",
        "pid": os.getpid(),
        "admitted": admitted,
        "denied": attempts - admitted,
        "first_call_us": first_call_us,
        "last_return_us": last_return_us,
        "retry_after_ms": (
            [round(min(retry_after) * 1000), round(max(retry_after) * 1000)] if retry_after else []
        ),
    }
    print(json.dumps(report, separators=(",", ":")), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except rl.RateLimitError as err:
        print(f"demo_worker.py: {err}", file=sys.stderr)
        sys.exit(1)
