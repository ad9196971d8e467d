"""What client.py (HTTP) and grpc_client.py (gRPC) share: the three routes
in every order in rotation, each request with a key no call made yet, the
warm-up, and the JSON line with each route's p50 and p99."""
import itertools
import json
import statistics

ROUTES = ("bare", "limited", "store")


def quantile(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(framework, requests, timed_call):
    """Prints the JSON line. timed_call(route, key) makes one request and
    returns (microseconds it took, its body); /store's body is the
    microseconds of rl's own acquire, timed inside the server (store_*),
    and the /store request as the client saw it is kept too
    (store_request_*): a handler that makes the acquire itself, so that
    store_request minus bare is the store's round trip as a request sees it,
    wake-ups after the call included."""
    times = {route: [] for route in ROUTES + ("store_request",)}
    # The six orders take turns, so each route follows each other equally
    # often; keys l1, s1, ...: every limited and store call admits a new key.
    orders = list(itertools.permutations(ROUTES))
    warmup = max(50, requests // 5)
    for i in range(warmup + requests):
        for route in orders[i % len(orders)]:
            took, body = timed_call(route, f"{route[0]}{i}")
            if i < warmup:
                continue
            if route == "store":
                times["store_request"].append(took)
                took = float(body)
            times[route].append(took)
    result = {"bench": "frameworks", "framework": framework, "requests": requests}
    for route, samples in times.items():
        result[f"{route}_p50_us"] = statistics.median(samples)
        result[f"{route}_p99_us"] = quantile(samples, 0.99)
    print(json.dumps(result))
