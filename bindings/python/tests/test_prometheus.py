"""rl.prometheus.StoreCollector with the real prometheus_client: the
registry's exposition, served over HTTP on loopback, carries the store's
decisions exactly."""

import urllib.request

import pytest
from prometheus_client import CollectorRegistry, generate_latest, start_http_server

import rl
from rl.prometheus import StoreCollector


def decide(store: rl.Store, allowed: int, denied: int) -> None:
    limiter = store.limiter(algorithm="gcra", limit=f"{allowed}/h")
    for _ in range(allowed + denied):
        limiter.acquire("k")


def test_one_store_is_served_over_http_with_exact_counts(store_url: str) -> None:
    with rl.open(store_url) as store:
        decide(store, allowed=3, denied=2)
        registry = CollectorRegistry()
        registry.register(StoreCollector(store))
        server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
        try:
            port = server.server_address[1]
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        finally:
            server.shutdown()
            thread.join()
        text = text.decode()
        assert 'rl_decisions_total{source="store",verdict="allowed"} 3.0' in text
        assert 'rl_decisions_total{source="store",verdict="denied"} 2.0' in text
        assert "# TYPE rl_breaker_state gauge" in text
        if not store_url.startswith("memory"):
            assert "rl_store_round_trip_seconds_count 5.0" in text


def test_several_stores_share_one_registry_by_label(redis_url: str, prefix: str) -> None:
    with rl.open("memory://") as edge, rl.open(f"{redis_url}?prefix={prefix}") as main:
        decide(edge, allowed=1, denied=0)
        decide(main, allowed=2, denied=1)
        registry = CollectorRegistry(auto_describe=True)
        registry.register(StoreCollector({"edge": edge, "main": main}))
        text = generate_latest(registry).decode()
        assert 'rl_decisions_total{source="store",store="edge",verdict="allowed"} 1.0' in text
        assert 'rl_decisions_total{source="store",store="main",verdict="allowed"} 2.0' in text
        assert 'rl_decisions_total{source="store",store="main",verdict="denied"} 1.0' in text
        # A second collector of the same names is refused by the registry.
        with pytest.raises(ValueError):
            registry.register(StoreCollector(main))


def test_bad_stores_are_refused() -> None:
    with pytest.raises(TypeError, match="stores must be"):
        StoreCollector({})
    with pytest.raises(TypeError, match="stores must be"):
        StoreCollector({"x": "memory://"})  # type: ignore[dict-item]
