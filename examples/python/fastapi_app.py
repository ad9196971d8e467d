"""A FastAPI app rate limited by rl, with its metrics for Prometheus:

    pip install fastapi uvicorn prometheus-client   # beside rl (see README.md)
    RL_URL=redis://127.0.0.1:6379 uvicorn fastapi_app:app --app-dir examples/python
    curl -i -H 'x-api-key: alice' http://127.0.0.1:8000/hello

Every route: 5 requests a minute per API key (or client address), the
RateLimit fields on each answer, 429 with Retry-After when over. /bulk
costs 5 of a limit of its own; /metrics serves the store's metrics.
"""

import os

from fastapi import Depends, FastAPI, Request, Response
from prometheus_client import CollectorRegistry, generate_latest

import rl
import rl.asgi
import rl.fastapi
from rl.prometheus import StoreCollector

store = rl.open(os.environ.get("RL_URL", "memory://"))
api = store.limiter(limit="5/1m", name="api")
bulk = rl.fastapi.RateLimit(store.limiter(limit="10/1m", name="bulk"), cost=lambda request: 5,
                            key=lambda request: request.headers.get("x-api-key", "anon"))
registry = CollectorRegistry()
registry.register(StoreCollector(store))

app = FastAPI()
app.add_middleware(rl.asgi.RateLimitMiddleware, limiter=api,
                   key=lambda scope: dict(scope["headers"]).get(b"x-api-key") or rl.asgi.client_address(scope))


@app.get("/hello")
async def hello(request: Request) -> dict[str, int]:
    return {"remaining": request.state.rate_limit.remaining}


@app.post("/bulk", dependencies=[Depends(bulk)])
async def bulk_import() -> dict[str, str]:
    return {"imported": "yes"}


@app.get("/metrics")
async def metrics() -> Response:
    return Response(generate_latest(registry), media_type="text/plain; version=0.0.4")
