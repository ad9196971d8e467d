"""The package's API: decisions, keys, limits, settings, sources, health,
metrics, credentials."""

import dataclasses
import os

import pytest

import rl


@pytest.fixture
def store():
    with rl.open("memory://?clock=manual") as s:
        yield s


def test_a_decision_is_a_frozen_dataclass_in_seconds(store):
    limiter = store.limiter(limit="10/s", burst=2)
    d = limiter.acquire("k")
    assert d == rl.Decision(True, 10, 1, 0.0, 0.1, 0, rl.Source.STORE)
    assert d and d.source == "store"
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.allowed = False
    limiter.acquire("k")
    denied = limiter.acquire("k")
    assert not denied and denied.retry_after == pytest.approx(0.1) and denied.retry_after_us == 100_000
    never = limiter.acquire("k", 3)  # above the burst: never
    assert never.retry_after == -1.0 and never.retry_after_us == -1_000_000 or never.retry_after == -1.0


def test_str_keys_are_their_utf8_bytes(store):
    limiter = store.limiter(limit="2/s")
    limiter.acquire("clé")
    assert limiter.peek("clé".encode(), 0).remaining == 1
    assert limiter.peek(b"cl\xc3\xa9\x00", 0).remaining == 2  # NUL is a byte like any other
    limiter.acquire(b"\x00\xff")
    assert limiter.peek(b"\x00\xff", 0).remaining == 1


def test_refund_reset_and_batches(store):
    limiter = store.limiter(limit="10/s")
    limiter.acquire("k", 5)
    assert limiter.refund("k", 2).remaining == 7
    limiter.reset("k")
    assert limiter.peek("k", 0).remaining == 10
    ds = limiter.acquire_batch(["a", ("a", 4), (b"b", 10), ("b", 1)])
    assert [d.allowed for d in ds] == [True, True, True, False]
    assert [d.remaining for d in ds] == [9, 5, 0, 0]


async def test_async_twins_agree_with_the_sync_methods(store):
    limiter = store.limiter(limit="10/s")
    assert (await limiter.aacquire("k", 5)).remaining == 5
    assert (await limiter.apeek("k", 0)).remaining == 5
    assert (await limiter.arefund("k", 1)).remaining == 6
    await limiter.areset("k")
    assert (await limiter.aacquire_batch(["k", "k"]))[1].remaining == 8
    assert (await limiter.aacquire_wait("k", 8)).allowed  # clock=manual: never waits


def test_limits_name_and_settings(store):
    limiter = store.limiter(algorithm="sliding_window", limit="10/s, 100/m", name="api", granularity="100ms")
    assert limiter.name == "api"
    assert limiter.limits == [rl.Limit(10, 1.0, 10), rl.Limit(100, 60.0, 100)]
    assert limiter.settings == {
        "algorithm": "sliding_window",
        "limit": "10/s, 100/m",
        "name": "api",
        "granularity": "100ms",
    }
    assert store.limiter(limit="1/s").name == "default"
    described = rl.settings()
    assert "on_failure" in described and "timeout_ms" in described and "gcra" in described["algorithm"]


def test_store_description(store):
    assert (store.scheme, store.in_process, store.manual_clock) == ("memory", True, True)
    assert store.decides_with() is None
    with rl.open("memory://") as other:
        assert not other.manual_clock


def test_decides_with_on_redis(redis_url, prefix):
    with rl.open(f"{redis_url}?prefix={prefix}") as store:
        assert store.decides_with() == rl.DecidesWith("auto", "functions", 0, 0)
        store.limiter(limit="5/h").acquire("k")
        with_ = store.decides_with()
        assert (with_.script_mode, with_.module_nodes + with_.lua_nodes) == ("auto", 1)
    assert store.decides_with().script_mode == "auto", "works after close"
    with rl.open(f"{redis_url}?prefix={prefix}&script_mode=scripts") as store:
        assert store.decides_with() == rl.DecidesWith("scripts", "scripts", 0, 0)


def test_every_status_has_its_class():
    assert rl.STATUS_NAMES[0] == "RL_OK"
    for code, name in rl.STATUS_NAMES.items():
        if code == 0:
            continue
        err = rl.errors.error_for(code, "m")
        assert isinstance(err, rl.RateLimitError)
        assert (err.status, err.code, err.message) == (name, code, "m")
        assert type(err) is not rl.RateLimitError, f"{name} has no class of its own"
    future = rl.errors.error_for(99, "m")
    assert type(future) is rl.RateLimitError and future.status == "RL_STATUS_99"


def test_outages_follow_on_failure():
    with rl.open("redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100") as store:
        assert store.scheme == "redis" and not store.in_process
        with pytest.raises(rl.BackendUnavailableError) as info:
            store.limiter(limit="10/s", name="closed").acquire("k")
        assert isinstance(info.value, ConnectionError)
        assert (
            store.limiter(limit="10/s", name="o", on_failure="open").acquire("k").source
            is rl.Source.FAIL_OPEN
        )
        local = store.limiter(limit="8/s", name="l", on_failure="local", local_share="1/4")
        d = local.acquire("k")
        assert (d.source, d.limit, d.remaining) == (rl.Source.LOCAL, 2, 1)
        stats = store.stats()
        assert stats.failures["RL_E_BACKEND_UNAVAILABLE"] >= 1
        assert stats.decisions[rl.Source.FAIL_OPEN].allowed == 1
        assert stats.decisions[rl.Source.LOCAL].allowed == 1


def test_an_open_breaker_is_named_by_librl():
    url = "redis://127.0.0.1:1?clock=manual&breaker_failures=1&connect_timeout_ms=100"
    with rl.open(url) as store:
        store.limiter(limit="10/s", name="o", on_failure="open").acquire("k")
        stats = store.stats()
        assert (stats.healthy, stats.breaker, stats.breaker_opened) == (False, "open", 1)


def test_stats_and_metrics_on_redis(redis_url, prefix):
    with rl.open(f"{redis_url}?prefix={prefix}") as store:
        limiter = store.limiter(limit="1/h", name="m")
        limiter.acquire("k")
        limiter.acquire("k")
        stats = store.stats()
        assert stats.healthy and stats.breaker == "closed" and store.is_healthy()
        assert stats.decisions[rl.Source.STORE] == rl.Verdicts(1, 1)
        assert stats.round_trips.count >= 2 and 0 < stats.round_trips.p50 < 1
        text = store.metrics()
        assert text.startswith("#") and "rl_" in text


def test_stats_count_the_leases_of_every_limiter():
    with rl.open("memory://?clock=manual") as store:
        settings = dict(algorithm="fixed_window", limit="10/s", lease="auto")
        settings.update(lease_threshold="20", lease_share="1/2")
        one, two = store.limiter(**settings), store.limiter(**settings)
        allowed = sum(one.acquire("k").allowed for _ in range(12))
        allowed += sum(two.acquire("k").allowed for _ in range(3))
        assert allowed <= 10
        stats = store.stats()
        leases = stats.leases
        assert leases.taken >= 1 and leases.units_leased >= leases.taken, leases
        assert 1 <= leases.decisions <= leases.units_leased, leases
        assert leases.units_returned <= leases.units_unused, leases
        assert stats.decisions[rl.Source.STORE].allowed == allowed
        assert f"\nrl_lease_taken_total {leases.taken}\n" in store.metrics()
    with rl.open("memory://") as store:
        store.limiter(limit="5/s").acquire("k")
        assert store.stats().leases == rl.Leases(0, 0, 0, 0, 0)


def test_credentials_never_show(redis_url):
    url = os.environ.get("RL_TEST_REDIS_PASSWORD_URL")
    if not url:
        pytest.skip("scripts/with-redis gives RL_TEST_REDIS_PASSWORD_URL")
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    wrong = f"{scheme}://{user}:not-the-password-42@{host}"
    with pytest.raises(rl.AuthError) as info:
        rl.open(wrong)
    assert "not-the-password-42" not in str(info.value)
    assert isinstance(info.value, PermissionError)
    with rl.open(url) as store:
        password = creds.split(":", 1)[1]
        assert password not in repr(store) and "***" in store.url
        assert store.limiter(limit="1/s", name="auth").acquire("k").allowed
