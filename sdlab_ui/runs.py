"""How many page runs draw at once: a few, in turn, rather than every visitor's at a time.

Every session's script runs as a thread of one process, and Python runs one thread at a time
(the GIL), switching every 5 ms. With twenty visitors' reruns ready at once, each advances in
turn, so each finishes only when all have nearly finished, and the event-loop thread, which
sends each run's elements to its browser, gets one turn in twenty-one. Runs that take turns
instead finish one after another: on average in about half the time, and their elements are
sent as they are made.

So a run draws its page holding one of ``RUNS_AT_ONCE`` slots. A run that must wait for
something another thread does (a budget slot, a result another session is computing, Graphviz)
gives its slot up while it waits (``paused``), so a slot is never held by a run that cannot go
on, and waits cannot chain into a deadlock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

RUNS_AT_ONCE = 2
"""Runs drawing at once: one per core, so a run that waits on a process of its own (``dot``) or
the operating system leaves the other going."""

_slots = threading.BoundedSemaphore(RUNS_AT_ONCE)
_held = threading.local()


def holds_slot() -> bool:
    """Whether this thread holds a run slot now."""
    return getattr(_held, "slot", False)


@contextmanager
def slot() -> Iterator[None]:
    """Draw the block holding a run slot (once per thread: a nested call takes none)."""
    if holds_slot():
        yield
        return
    _slots.acquire()
    _held.slot = True
    try:
        yield
    finally:
        _held.slot = False
        _slots.release()


@contextmanager
def paused() -> Iterator[None]:
    """Give this thread's run slot (if it holds one) to another run while the block waits."""
    if not holds_slot():
        yield
        return
    _held.slot = False
    _slots.release()
    try:
        yield
    finally:
        _slots.acquire()
        _held.slot = True
