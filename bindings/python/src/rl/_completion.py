"""Completing asyncio futures from rl's I/O thread.

Each event loop gets one completion queue in the native layer. An async
call hands librl the queue and a future; rl's thread queues the result and,
when the queue was idle, wakes the loop once with call_soon_threadsafe; the
loop then settles every queued future (native.queue_drain). A future
cancelled meanwhile is left as it is: the call still completes once in
librl, and its result is dropped on the loop's thread.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from . import native


class _Queue:
    __slots__ = ("handle", "__weakref__")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        handle = native.queue_new()
        self.handle = handle
        loop_ref = weakref.ref(loop)
        drain = native._native.queue_drain  # SWIG's own: no Python wrapper per wake-up

        def wake() -> None:
            # The queue holds only a weak reference to the loop: a loop that
            # is gone, or closed, raises, and librl's results are dropped.
            target = loop_ref()
            if target is None:
                raise RuntimeError("the event loop is gone")
            target.call_soon_threadsafe(drain, handle)

        native.queue_set_wake(handle, wake)
        weakref.finalize(self, native.queue_release, handle)


_queues: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue]" = weakref.WeakKeyDictionary()


def _no_loop() -> None:
    return None


# The loop of the last call and its queue's handle: a program runs one loop,
# so this spares a call the weak dictionary's lookup (a new weak reference
# each). Weak: a loop that is gone frees its queue as before.
_last: tuple[Any, Any] = (_no_loop, None)


def queue_of(loop: asyncio.AbstractEventLoop) -> Any:
    """The native completion queue of loop (made on first use)."""
    global _last
    last_loop, handle = _last
    if last_loop() is loop:
        return handle
    q = _queues.get(loop)
    if q is None:
        q = _queues[loop] = _Queue(loop)
    _last = (weakref.ref(loop), q.handle)
    return q.handle
