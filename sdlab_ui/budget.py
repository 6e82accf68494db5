"""The process-wide budget for expensive work: how many expensive computations run at once.

Every visitor's script runs as a thread of one server process. Streamlit's caches keep results,
but nothing limits how many are computed at the same time, and a URL can ask for values no
slider offers, so a hostile visitor misses the cache at will. Ten visitors looping on such URLs
each started a dense M/D/c solve (0.4–1.1 s of CPU and 100–200 MB each): the server reached
2.08 GB and another visitor's slider move took 3.8 s at p95 (issue 13). Here expensive work
first takes a slot in one of two lanes:

- ``HEAVY``, one slot: work that can take seconds and hundreds of MB — an exact M/D/c solve near
  saturation (``is_heavy_evaluation``) and the Heatmaps page's grid simulation. One at a time,
  so at most one such computation's memory is held, and the other core stays free for everyone
  else's ordinary reruns.
- ``WORK``, two slots (this app is sized for a 2-core machine): the Lab's simulation and the
  heatmap grids, tens to a few hundred ms each.

Ordinary evaluations (a few ms) take no slot. A thread holding a slot takes none again, so
nested calls cannot deadlock. A visitor whose work must wait sees a spinner saying so; it
appears after Streamlit's half-second spinner delay, so short waits go unnoticed. (Work a page
hands to a worker thread, such as drawing the diagram, waits without one.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sdlab_model.workload import Workload
from sdlab_ui import runs

HEAVY_UTILIZATION = 0.9
"""From here up an unbatched queueing evaluation solves a large M/D/c chain exactly: its state
space grows like 1 / (1 − utilization). With the dense solve for every fleet (to 2026-11-30) an
evaluation took up to 0.13 s at 0.9, 0.4 s at 0.98, 1.4 s at 0.99 and 2.9 s at 0.993, with
130–250 MB of temporary memory near 0.99. GTH state reduction
(``sdlab_model/queues/_mdc_kernel.py``, up to 256 servers) cut one solve at 0.99 to 23 ms at 1–4
servers, 32 ms at 32 and 0.25 s at 256; at 0.993, 51 ms to 0.53 s (2026-12-01, one call each on
2 shared cores). Above 256 servers the dense solve remains, and an evaluation makes several
solves, so such evaluations still take this lane.
Batched evaluations take under 10 ms at any utilization."""


@dataclass
class Lane:
    """A bounded number of slots for one kind of expensive work, shared by every session."""

    name: str
    slots: int
    _semaphore: threading.BoundedSemaphore = field(init=False, repr=False)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)
    _waiting: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._semaphore = threading.BoundedSemaphore(self.slots)

    @property
    def waiting(self) -> int:
        """Threads waiting for a slot now."""
        return self._waiting

    def acquire(self) -> None:
        """Take a slot, showing the visitor a spinner while they wait for one (a worker thread,
        which has no page to show it on, just waits)."""
        if self._semaphore.acquire(blocking=False):
            return
        if get_script_run_ctx() is None:
            self._semaphore.acquire()
            return
        with self._lock:
            self._waiting += 1
            ahead = self._waiting - 1
        try:
            queue = f", {ahead} more ahead of yours" if ahead else ""
            runs.give_up()  # no run slot held while waiting (see sdlab_ui/runs.py)
            with st.spinner(
                "Waiting for the server: other visitors' computations are running"
                f"{queue}. Yours starts as soon as one ends…",
                show_time=True,
            ):
                self._semaphore.acquire()
        finally:
            with self._lock:
                self._waiting -= 1

    def release(self) -> None:
        self._semaphore.release()


HEAVY = Lane("heavy", slots=1)
WORK = Lane("work", slots=2)
_held = threading.local()


def held_lane() -> Lane | None:
    """The lane this thread holds a slot in, if any."""
    return getattr(_held, "lane", None)


@contextmanager
def slot(lane: Lane | None) -> Iterator[None]:
    """Run the block holding a slot in ``lane`` (``None``: no slot needed).

    The run gives its page-run slot up (``runs.give_up``): its lane bounds this work already,
    and a computation of a second or more holding a run slot too would keep other visitors'
    ordinary reruns waiting for it."""
    if lane is None or held_lane() is not None:
        yield
        return
    runs.give_up()
    lane.acquire()
    _held.lane = lane
    try:
        yield
    finally:
        _held.lane = None
        lane.release()


def is_heavy_evaluation(workload: Workload, model: str) -> bool:
    """Whether evaluating ``workload`` under ``model`` may take seconds (an exact M/D/c solve
    near saturation) rather than milliseconds."""
    if model != "queueing" or workload.dynamic_batching:
        return False
    utilization = workload.rate_rps / workload.capacity_rps
    return HEAVY_UTILIZATION <= utilization < 1.0


def evaluation_lane(workload: Workload, model: str) -> Lane | None:
    """The lane an evaluation takes: ``HEAVY`` near saturation, none otherwise."""
    return HEAVY if is_heavy_evaluation(workload, model) else None
