"""How many page runs draw at once: a few, in turn, rather than every visitor's at a time.

Every session's script runs as a thread of one process, and Python runs one thread at a time
(the GIL), switching every 5 ms. With twenty visitors' reruns ready at once, each advances in
turn, so each finishes only when all have nearly finished, and the event-loop thread, which
sends each run's elements to its browser, gets one turn in twenty-one. Runs that take turns
instead finish one after another: on average in about half the time, and their elements are
sent as they are made.

So a run starts drawing once it holds one of ``RUNS_AT_ONCE`` slots. A run about to wait for
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec

import streamlit as st

from sdlab_ui import forged

_P = ParamSpec("_P")

RUNS_AT_ONCE = 2
"""Runs drawing at once: one per core, so a run that waits on the operating system (a socket, a
process of its own) leaves the other going."""

_slots = threading.BoundedSemaphore(RUNS_AT_ONCE)
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
