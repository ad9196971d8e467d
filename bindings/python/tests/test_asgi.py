"""rl.asgi.RateLimitMiddleware and rl.fastapi.RateLimit in a real FastAPI app
served by uvicorn on loopback, answering real HTTP requests: the Nth+1
request is limited with librl's fields, a route limits alone or not at all,
an unreachable store is 503, two apps on one Redis share one limit, and bad
options are refused when the app is built."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Iterator, Optional

import pytest
import uvicorn
from fastapi import Depends, FastAPI, Request, Response

import rl
import rl.asgi
import rl.fastapi


class Server:
    """uvicorn serving `app` on a loopback port of its own, in a thread."""

    def __init__(self, app: FastAPI) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)

    def get(self, path: str, api_key: str = "alice") -> tuple[int, dict[str, str], str]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers={"x-api-key": api_key})
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join()
        self.sock.close()


@pytest.fixture
def serve() -> Iterator:
    servers: list[Server] = []

    def start(app: FastAPI) -> Server:
        servers.append(Server(app))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


def api_key(scope) -> bytes:  # type: ignore[no-untyped-def]
    return dict(scope["headers"]).get(b"x-api-key", b"anon")


def app_with_middleware(limiter: rl.Limiter) -> FastAPI:
    app = FastAPI()
    app.add_middleware(rl.asgi.RateLimitMiddleware, limiter=limiter, key=api_key)

    @app.get("/")
    async def root() -> dict[str, Optional[int]]:
        return {"ok": 1}

    return app


def test_the_middleware_limits_with_librls_fields(serve) -> None:  # type: ignore[no-untyped-def]
    with rl.open("memory://?clock=manual") as store:
        server = serve(app_with_middleware(store.limiter(limit="5/1m", name="api")))
        for i in range(1, 6):
            status, headers, _ = server.get("/")
            assert status == 200, i
            assert headers["ratelimit-policy"] == '"api";q=5;w=60'
            assert headers["ratelimit"] == f'"api";r={5 - i};t={12 * i}'
        status, headers, body = server.get("/")
        assert status == 429 and body == "Too Many Requests\n"
        assert headers["retry-after"] == "12"
        assert headers["ratelimit"] == '"api";r=0;t=60'


def test_a_route_limits_alone_or_not_at_all(serve) -> None:  # type: ignore[no-untyped-def]
    with rl.open("memory://?clock=manual") as store:
        bulk = rl.fastapi.RateLimit(store.limiter(limit="10/1m", name="bulk", algorithm="fixed_window"),
                                    cost=lambda request: 5)
        app = FastAPI()

        @app.get("/bulk")
        async def route(decision: rl.Decision = Depends(bulk)) -> dict[str, int]:
            return {"remaining": decision.remaining}

        @app.get("/free")
        async def free() -> str:
            return "ok"

        server = serve(app)
        assert server.get("/bulk")[0] == 200
        status, headers, _ = server.get("/bulk")
        assert status == 200 and headers["ratelimit-policy"] == '"bulk";q=10;w=60'
        status, headers, _ = server.get("/bulk")
        assert status == 429 and "retry-after" in headers
        for _ in range(20):
            status, headers, _ = server.get("/free")
            assert status == 200 and "ratelimit" not in headers


def test_a_wrapped_endpoint_answers_as_the_dependency_does(serve) -> None:  # type: ignore[no-untyped-def]
    with rl.open("memory://?clock=manual") as store:
        limit = rl.fastapi.RateLimit(store.limiter(limit="3/1m", name="items"),
                                     key=lambda request: request.headers.get("x-api-key", "anon"))
        app = FastAPI()

        @app.get("/items/{item}")
        @limit.wrap
        async def item(item: int, q: str = "none") -> dict[str, object]:
            return {"item": item, "q": q}

        # The endpoint's own request and response: passed to it as well.
        @app.get("/own")
        @limit.wrap
        def own(request: Request, response: Response) -> str:  # sync: FastAPI's thread pool
            response.headers["x-own"] = request.url.path
            return "own"

        server = serve(app)
        status, headers, body = server.get("/items/7?q=x")
        assert (status, body) == (200, '{"item":7,"q":"x"}')
        assert headers["ratelimit-policy"] == '"items";q=3;w=60'
        assert headers["ratelimit"] == '"items";r=2;t=20'
        status, headers, body = server.get("/own")
        assert (status, body, headers["x-own"]) == (200, '"own"', "/own")
        assert headers["ratelimit"] == '"items";r=1;t=40'
        # FastAPI validates the endpoint's parameters first: a request it
        # refuses (422) never reaches the endpoint, nor its acquire.
        assert server.get("/items/x")[0] == 422
        assert server.get("/items/8")[1]["ratelimit"] == '"items";r=0;t=60'
        status, headers, _ = server.get("/items/9")
        assert status == 429 and headers["retry-after"] == "20" and headers["ratelimit"] == '"items";r=0;t=60'
        assert server.get("/items/8", "bob")[0] == 200  # a key of its own
        assert "/items/{item}" in app.openapi()["paths"]


def test_wrap_refuses_what_it_cannot_limit() -> None:
    with rl.open("memory://") as store:
        limit = rl.fastapi.RateLimit(store.limiter(limit="1/s"))
        with pytest.raises(TypeError, match="RateLimit.wrap: endpoint: must be a function"):
            limit.wrap("x")  # type: ignore[arg-type]

        async def stream() -> Iterator[bytes]:  # type: ignore[misc]
            yield b"x"

        with pytest.raises(TypeError, match="RateLimit.wrap: endpoint: a generator .* Depends instead"):
            limit.wrap(stream)


def test_an_unreachable_store_is_503_and_open_passes_without_fields(serve) -> None:  # type: ignore[no-untyped-def]
    with rl.open("redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100&breaker_failures=0") as store:
        closed = serve(app_with_middleware(store.limiter(limit="5/1m")))
        status, _, body = closed.get("/")
        assert status == 503 and "store unreachable" in body
        opened = serve(app_with_middleware(store.limiter(limit="5/1m", on_failure="open")))
        status, headers, _ = opened.get("/")
        assert status == 200 and "ratelimit" not in headers
        app = FastAPI()

        @app.get("/")
        @rl.fastapi.RateLimit(store.limiter(limit="5/1m")).wrap
        async def root() -> str:
            return "ok"

        status, _, body = serve(app).get("/")
        assert status == 503 and "store unreachable" in body


def test_two_apps_on_one_redis_share_one_limit(serve, redis_url: str, prefix: str) -> None:  # type: ignore[no-untyped-def]
    with rl.open(f"{redis_url}?prefix={prefix}&clock=manual") as a, rl.open(f"{redis_url}?prefix={prefix}&clock=manual") as b:
        one = serve(app_with_middleware(a.limiter(limit="5/1m", name="shared")))
        two = serve(app_with_middleware(b.limiter(limit="5/1m", name="shared")))
        statuses = [(one if i % 2 == 0 else two).get("/", "bob")[0] for i in range(7)]
        assert statuses == [200] * 5 + [429] * 2


def test_bad_options_are_refused_naming_them() -> None:
    with rl.open("memory://") as store:
        with pytest.raises(TypeError, match="RateLimitMiddleware: limiter: must be an rl.Limiter"):
            rl.asgi.RateLimitMiddleware(FastAPI(), limiter="x")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="RateLimit: cost: must be a function"):
            rl.fastapi.RateLimit(store.limiter(limit="1/s"), cost=5)  # type: ignore[arg-type]


def test_the_example_app_answers_as_its_docstring_says(serve) -> None:  # type: ignore[no-untyped-def]
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "examples" / "python" / "fastapi_app.py"
    spec = importlib.util.spec_from_file_location("fastapi_app_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    try:
        server = serve(example.app)
        for i in range(1, 6):
            status, headers, body = server.get("/hello", "eve")
            assert status == 200 and body == f'{{"remaining":{5 - i}}}'
        assert server.get("/hello", "eve")[0] == 429
        status, _, body = server.get("/metrics", "mallory")
        assert status == 200 and 'rl_decisions_total{source="store",verdict="denied"} 1.0' in body
    finally:
        example.store.close()
