"""bench/frameworks' FastAPI app (served by uvicorn): /bare, /limited behind
rl.fastapi.RateLimit (its endpoint wrapped: limit.wrap; with
RL_BENCH_FASTAPI_DEPENDS=1 the dependency, Depends(limit), which FastAPI
solves per request), /store: the microseconds one acquire of the same
limiter takes, timed in the app.

  RL_URL=redis://... python fastapi_app.py    # prints "listening on http://127.0.0.1:PORT"
"""
import asyncio
import os
import socket
import time

import uvicorn
from fastapi import Depends, FastAPI, Request
from fastapi.responses import PlainTextResponse

import rl
import rl.fastapi

store = rl.open(os.environ.get("RL_URL", "memory://"))
limiter = store.limiter(name="bench-fw", limit="1000000000/1s")
limited = rl.fastapi.RateLimit(limiter, key=lambda request: request.headers.get("x-api-key", "anon"))
app = FastAPI()


@app.get("/bare")
async def bare() -> str:
    return "ok"


if os.environ.get("RL_BENCH_FASTAPI_DEPENDS") == "1":
    @app.get("/limited", dependencies=[Depends(limited)])
    async def limited_route() -> str:
        return "ok"
else:
    @app.get("/limited")
    @limited.wrap
    async def limited_route() -> str:
        return "ok"


@app.get("/store", response_class=PlainTextResponse)
async def store_round_trip(request: Request) -> str:
    began = time.perf_counter_ns()
    await limiter.aacquire(request.headers.get("x-api-key", "anon"))
    return str((time.perf_counter_ns() - began) / 1000)


async def main() -> None:
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on such sockets (else
    # Nagle holds the body behind the headers until the client's delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", int(os.environ.get("PORT", "0"))))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
