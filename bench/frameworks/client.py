#!/usr/bin/env python3
"""The loopback HTTP client of bench/frameworks/run: one keep-alive
connection, sequential requests alternating GET /bare and GET /limited (the
same app, the same run; a fresh X-Api-Key per request, so every limited
request is a store round trip that admits), then GET /store?n=N: the app's
own N sequential acquires, timed inside it (the store's own round trip as
that binding sees it). Prints one JSON line:

  client.py URL FRAMEWORK REQUESTS
"""
import http.client
import json
import socket
import statistics
import sys
import time
import urllib.parse


def quantile(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    url, framework, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.connect()
    # No Nagle on the client: a request is one write, but a wait for an ACK
    # the server delays would show as the framework's latency.
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = {"bare": [], "limited": []}
    warmup = max(50, requests // 5)
    for i in range(warmup + requests):
        for route in ("bare", "limited"):
            began = time.perf_counter_ns()
            conn.request("GET", f"/{route}", headers={"X-Api-Key": f"k{i}"})
            response = conn.getresponse()
            response.read()
            took = (time.perf_counter_ns() - began) / 1000
            if response.status != 200:
                sys.exit(f"client.py: {framework} /{route}: HTTP {response.status}")
            if i >= warmup:
                times[route].append(took)
    conn.request("GET", f"/store?n={requests}")
    response = conn.getresponse()
    store = json.loads(response.read())
    result = {"bench": "frameworks", "framework": framework, "requests": requests}
    for route, samples in times.items():
        result[f"{route}_p50_us"] = statistics.median(samples)
        result[f"{route}_p99_us"] = quantile(samples, 0.99)
    result["store_p50_us"] = store["p50_us"]
    result["store_p99_us"] = store["p99_us"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
