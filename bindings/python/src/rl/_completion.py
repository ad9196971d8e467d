"""Completing asyncio futures from rl's I/O thread.

librl runs a completion exactly once, on its own thread. The native hook
calls a ``_Pending`` with (status, payload); it hands the result to the
future's event loop with ``loop.call_soon_threadsafe`` and then lets go of
the future, so that whatever the future holds is released on the loop's
thread, never on rl's (where freeing a store would wait for itself).
A future cancelled in the meantime is left as it is: the completion still
happens once, and its result is dropped.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional


def _settle(fut: asyncio.Future, status: int, payload: Any, convert: Callable[[Any], Any]) -> None:
    if fut.done():  # cancelled while librl worked: nothing to deliver
        return
    if status == 0:
        fut.set_result(convert(payload))
    else:
        fut.set_exception(payload)


class Pending:
    __slots__ = ("_loop", "_fut", "_convert")

    def __init__(self, loop: asyncio.AbstractEventLoop, fut: asyncio.Future, convert: Callable[[Any], Any]):
        self._loop: Optional[asyncio.AbstractEventLoop] = loop
        self._fut: Optional[asyncio.Future] = fut
        self._convert = convert

    def __call__(self, status: int, payload: Any) -> None:
        loop, fut = self._loop, self._fut
        self._loop = self._fut = None
        if loop is None or fut is None:
            return
        try:
            loop.call_soon_threadsafe(_settle, fut, status, payload, self._convert)
        except RuntimeError:
            pass  # the loop is closed: nobody awaits the future any more
