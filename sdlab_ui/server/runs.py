"""How many page runs draw at once: a few, in turn, rather than every visitor's at a time.

Every session's script runs as a thread of one process, and Python runs one thread at a time
(the GIL), switching every 5 ms. With twenty visitors' reruns ready at once, each advances in
turn, so each finishes only when all have nearly finished, and the event-loop thread, which
sends each run's elements to its browser, gets one turn in twenty-one. Runs that take turns
instead finish one after another: on average in about half the time, and their elements are
sent as they are made.

So a run starts drawing once it holds one of ``RUNS_AT_ONCE`` slots, given in turn by how much
each session has drawn lately (``FairSlots``). A run about to wait for
something another thread does (a budget slot, a result another session is computing, Graphviz)
or to compute under a budget lane (which bounds that work already) gives its slot up for the
rest of the run (``give_up``), and never waits for one again. The only wait for a slot is then
at a run's start, where the run holds nothing another run could be waiting for: no wait can
close a cycle. (Taking the slot back after such a wait deadlocked: two runs holding both slots
waited for a result that a third was computing, and the third waited for a slot.)
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import ParamSpec

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sdlab_ui import forged

_P = ParamSpec("_P")

RUNS_AT_ONCE = 2
"""Runs drawing at once: one per core, so a run that waits on the operating system (a socket, a
process of its own) leaves the other going."""

USAGE_HALF_LIFE_S = 30.0
"""How fast a session's drawing time is forgotten in its turn for a slot (halved per this many
seconds)."""


class FairSlots:
    """``slots`` run slots, each freed one going to the waiting run whose session has drawn the
    least lately (seconds holding a slot, halving every ``USAGE_HALF_LIFE_S``), then to the
    longest waiting. A visitor whose every rerun is expensive (a loop on costly inputs) waits
    behind the visitors whose reruns are cheap, instead of taking a slot in their turn."""

    def __init__(self, slots: int) -> None:
        self._condition = threading.Condition()
        self._free = slots
        self._waiting: list[tuple[Hashable, int]] = []
        self._issued = 0
        self._used: dict[Hashable, tuple[float, float]] = {}
        self._local = threading.local()

    def used_s(self, owner: Hashable, now: float) -> float:
        seconds, stamp = self._used.get(owner, (0.0, now))
        return seconds * 0.5 ** ((now - stamp) / USAGE_HALF_LIFE_S)

    def acquire(self) -> None:
        owner = _session()
        with self._condition:
            ticket = (owner, self._issued)
            self._issued += 1
            self._waiting.append(ticket)
            self._condition.wait_for(lambda: self._free > 0 and self._next() == ticket)
            self._waiting.remove(ticket)
            self._free -= 1
            if self._free > 0 and self._waiting:
                self._condition.notify_all()
        self._local.held = (owner, time.monotonic())

    def release(self) -> None:
        owner, started = self._local.__dict__.pop("held", (None, None))
        with self._condition:
            if owner is not None:
                now = time.monotonic()
                self._used[owner] = (self.used_s(owner, now) + now - started, now)
                for idle in [o for o in self._used if self.used_s(o, now) < 1e-3]:
                    del self._used[idle]
            self._free += 1
            self._condition.notify_all()

    def _next(self) -> tuple[Hashable, int]:
        now = time.monotonic()
        return min(self._waiting, key=lambda t: (round(self.used_s(t[0], now), 2), t[1]))


def _session() -> Hashable:
    """Whose run this is: its session, or the thread where there is none."""
    context = get_script_run_ctx()
    session = getattr(context, "session_id", None)
    return session if session is not None else ("thread", threading.get_ident())


_slots = FairSlots(RUNS_AT_ONCE)
_held = threading.local()


def holds_slot() -> bool:
    """Whether this thread holds a run slot now."""
    return getattr(_held, "slot", False)


@contextmanager
def slot() -> Iterator[None]:
    """Draw the block holding a run slot, taken at its start (once per thread: a nested call
    takes none). Call it where the thread holds no lock another run might wait for."""
    if holds_slot():
        yield
        return
    _slots.acquire()
    _held.slot = True
    try:
        yield
    finally:
        give_up()


def give_up() -> None:
    """Hand this thread's run slot (if it holds one) to another run; this run goes on without."""
    if holds_slot():
        _held.slot = False
        _slots.release()


def fragment(function: Callable[_P, None]) -> Callable[_P, None]:
    """``st.fragment``: a section a visitor's own inputs rerun without the rest of the page.

    Its own reruns take a run slot, as a page run does, and treat a forged widget value as the
    page does (``forged.recovering``); inside a page run it holds the page's slot already."""

    @st.fragment
    @functools.wraps(function)
    def section(*args: _P.args, **kwargs: _P.kwargs) -> None:
        with forged.recovering(), slot():
            function(*args, **kwargs)

    return section
