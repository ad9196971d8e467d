#!/usr/bin/env python3
"""The loopback HTTP client of bench/frameworks/run: one keep-alive
connection, sequential requests in turn to GET /bare, GET /limited (the same
app, the same run; a fresh X-Api-Key each time, so every limited request is
a store round trip that admits) and GET /store, whose body is the
microseconds one of rl's own acquires took, timed inside the app: the
store's round trip as that binding sees it, between requests as the
limited route's is. Prints one JSON line:

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
    times = {"bare": [], "limited": [], "store": []}
    warmup = max(50, requests // 5)
    for i in range(warmup + requests):
        for route in ("bare", "limited", "store"):
            began = time.perf_counter_ns()
            conn.request("GET", f"/{route}", headers={"X-Api-Key": f"k{i}"})
            response = conn.getresponse()
            body = response.read()
            took = (time.perf_counter_ns() - began) / 1000
            if route == "store":
                took = float(body)
            if response.status != 200:
                sys.exit(f"client.py: {framework} /{route}: HTTP {response.status}")
            if i >= warmup:
                times[route].append(took)
    result = {"bench": "frameworks", "framework": framework, "requests": requests}
    for route, samples in times.items():
        result[f"{route}_p50_us"] = statistics.median(samples)
        result[f"{route}_p99_us"] = quantile(samples, 0.99)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
