"""The process-wide budget for expensive work: how many expensive computations run at once.

Every visitor's script runs as a thread of one server process. Streamlit's caches keep results,
but nothing limits how many are computed at the same time, and a URL can ask for values no
slider offers, so a hostile visitor misses the cache at will. Ten visitors looping on such URLs
each started a dense M/D/c solve (0.4–1.1 s of CPU and 100–200 MB each): the server reached
2.08 GB and another visitor's slider move took 3.8 s at p95 (issue 13). Here expensive work
first takes a slot in one of two lanes:

- ``HEAVY``, one slot: work that can take seconds and hundreds of MB — an exact M/D/c solve near
  saturation (``is_heavy_evaluation``), the Heatmaps page's grid simulation (row by row in the
  simulation worker, ``worker.py``) and the Timeline's check. One at a time, so at most one such
  computation's memory is held, and the other core stays free for everyone else's reruns.
- ``WORK``, two slots (this app is sized for a 2-core machine): the Lab's simulation and the
  heatmap grids, tens to a few hundred ms each.
- ``PYTHON``, one slot: a canary plan or an HTML report, Python for up to a second each, which
  a visitor can ask for again and again with new inputs.

Ordinary evaluations (a few ms) take no slot. A thread holding a slot takes none again, so
nested calls cannot deadlock. Slots go in turns (``Lane``): a visitor looping on expensive work
waits behind the others each time rather than taking a freed slot first, as a semaphore let it.
A visitor whose work must wait sees a spinner saying so, with their place in line; it appears
after Streamlit's half-second spinner delay, so short waits go unnoticed. (Work a page hands to
a worker thread, such as drawing the diagram or building a report, waits without one.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sdlab_model.workload import Workload
from sdlab_ui.server import runs

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


USAGE_HALF_LIFE_S = 60.0
"""How fast a visitor's use of a lane is forgotten in their turn (halved per this many seconds)."""

WAIT_REFRESH_S = 1.0
"""How often a waiting visitor's place in line is looked at again (and redrawn if it moved)."""


@dataclass
class _Ticket:
    owner: Hashable
    order: int
    remaining_s: float = 0.0
    granted: bool = False


def _owner() -> Hashable:
    """Whose turn this is: the visitor's session, or the thread where there is none (a
    download's worker)."""
    context = get_script_run_ctx()
    session = getattr(context, "session_id", None)
    return session if session is not None else ("thread", threading.get_ident())


def place_text(place: int) -> str:
    """A waiting visitor's place in line, in words."""
    if place <= 1:
        return "Yours is next in line."
    return f"Yours is number {place} in line."


@dataclass
class Lane:
    """A bounded number of slots for one kind of expensive work, shared by every session.

    Slots are handed out in turns: when one frees, it goes to the waiting request whose visitor
    holds and has queued the fewest ahead of it, then to the one with the least work left (long
    work resuming between its pieces says how much, ``take_turns``; a new request counts as
    none), then whose visitor has used the lane the least lately (seconds held, halving every
    ``USAGE_HALF_LIFE_S``), then to the longest waiting. A request never takes a slot past
    someone already waiting (a visitor looping on expensive work queues behind the others each
    time), and a short press goes before the rest of a long computation: a Verify of a few
    seconds is not made to share the lane evenly with a timeline check of a minute, whose
    visitor opens a new session for each one."""

    name: str
    slots: int
    _condition: threading.Condition = field(
        init=False, repr=False, default_factory=threading.Condition
    )
    _holders: list[Hashable] = field(init=False, repr=False, default_factory=list)
    _queue: list[_Ticket] = field(init=False, repr=False, default_factory=list)
    _issued: int = field(init=False, repr=False, default=0)
    _granted_at: dict[Hashable, list[float]] = field(init=False, repr=False, default_factory=dict)
    _used: dict[Hashable, tuple[float, float]] = field(init=False, repr=False, default_factory=dict)

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot now."""
        return len(self._queue)

    def others_first(self, owner: Hashable, remaining_s: float = 0.0) -> bool:
        """Whether a request of another visitor waits whose turn comes before ``owner``'s would,
        were ``owner`` to give up one of its slots now and ask again with ``remaining_s`` of work
        left (its hold so far counted)."""
        with self._condition:
            now = time.monotonic()
            held_since = self._granted_at.get(owner, [now])[0]
            mine = (
                self._holders.count(owner) - 1,
                round(remaining_s, 1),
                round(self.used_s(owner, now) + now - held_since, 1),
            )
            return any(
                self._turn(ticket)[:3] <= mine for ticket in self._queue if ticket.owner != owner
            )

    def acquire(self, quiet: bool = False, remaining_s: float = 0.0) -> None:
        """Take a slot in turn, showing the visitor their place in line while they wait (a
        worker thread, which has no page to show it on, or a ``quiet`` call just waits);
        ``remaining_s``: the work left, for long work resuming between its pieces."""
        owner = _owner()
        with self._condition:
            ticket = _Ticket(owner, self._issued, remaining_s)
            self._issued += 1
            self._queue.append(ticket)
            self._grant()
            if ticket.granted:
                return
            place = self._place(ticket)
        try:
            if quiet or get_script_run_ctx() is None:
                with self._condition:
                    self._condition.wait_for(lambda: ticket.granted)
                return
            runs.give_up()  # no run slot held while waiting (see sdlab_ui/server/runs.py)
            self._wait_showing_place(ticket, place)
        except BaseException:
            with self._condition:
                if ticket.granted:
                    self._release(owner)
                else:
                    self._queue.remove(ticket)
            raise

    def _wait_showing_place(self, ticket: _Ticket, place: int) -> None:
        with st.spinner(
            "Waiting for the server: other visitors' computations are running. Yours starts "
            "as soon as its turn comes…",
            show_time=True,
        ):
            shown = st.empty()
            shown.caption(place_text(place))
            while True:
                with self._condition:
                    if self._condition.wait_for(lambda: ticket.granted, WAIT_REFRESH_S):
                        break
                    place = self._place(ticket)
                # Drawn each time: a visitor who has left or clicked again is asked to stop at
                # their next element, so their place goes to the next in line.
                shown.caption(place_text(place))
            shown.empty()

    def release(self) -> None:
        with self._condition:
            self._release(_owner())

    def _release(self, owner: Hashable) -> None:
        if not self._holders:
            raise ValueError(f"the {self.name} lane has no slot held to release")
        owner = owner if owner in self._holders else self._holders[0]
        self._holders.remove(owner)
        now = time.monotonic()
        started = self._granted_at.get(owner, [])
        if started:
            self._used[owner] = (self.used_s(owner, now) + now - started.pop(0), now)
        if not started:
            self._granted_at.pop(owner, None)
        self._forget_idle(now)
        self._grant()

    def used_s(self, owner: Hashable, now: float) -> float:
        """Seconds ``owner`` has held this lane's slots, each halved per ``USAGE_HALF_LIFE_S``
        since."""
        seconds, stamp = self._used.get(owner, (0.0, now))
        return seconds * 0.5 ** ((now - stamp) / USAGE_HALF_LIFE_S)

    def _forget_idle(self, now: float) -> None:
        """Drop visitors' usage once it has decayed below a millisecond (sessions come and go)."""
        for owner in [o for o in self._used if self.used_s(o, now) < 1e-3]:
            del self._used[owner]

    def _turn(self, ticket: _Ticket) -> tuple[int, float, float, int]:
        """Sort key of a waiting request: its visitor's slots held and requests queued ahead
        of it, then its work left, then its visitor's recent use of the lane, then its age."""
        ahead = sum(1 for t in self._queue if t.owner == ticket.owner and t.order < ticket.order)
        used = self.used_s(ticket.owner, time.monotonic())
        return (
            self._holders.count(ticket.owner) + ahead,
            round(ticket.remaining_s, 1),
            round(used, 1),
            ticket.order,
        )

    def _place(self, ticket: _Ticket) -> int:
        """1 for the next request to get a slot, 2 for the one after, …"""
        mine = self._turn(ticket)
        return 1 + sum(1 for t in self._queue if t is not ticket and self._turn(t) < mine)

    def _grant(self) -> None:
        """Hand free slots to the waiting requests whose turn it is (the lock held)."""
        granted = False
        while self._queue and len(self._holders) < self.slots:
            ticket = min(self._queue, key=self._turn)
            self._queue.remove(ticket)
            ticket.granted = True
            self._holders.append(ticket.owner)
            self._granted_at.setdefault(ticket.owner, []).append(time.monotonic())
            granted = True
        if granted:
            self._condition.notify_all()


HEAVY = Lane("heavy", slots=1)
WORK = Lane("work", slots=2)
PYTHON = Lane("python", slots=1)
"""Work that runs Python itself for up to a second or so (the canary plan's searches, an HTML
report's rendering): one at a time, since each holds the interpreter (the GIL) against every
visitor's reruns."""
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
    _held.lane, _held.worked_s, _held.since = lane, 0.0, time.monotonic()
    try:
        yield
    finally:
        if held_lane() is lane:  # take_turns may have lost it to an interrupted wait
            _held.lane = None
            lane.release()


def take_turns(done_share: float = 0.0) -> None:
    """Between the pieces of long work done in a slot, ``done_share`` of it done: if another
    visitor's turn has come (``Lane.others_first``), hand them the slot and queue again behind
    them, so a short computation is not held up for the whole of a long one (a Verify of
    seconds, a timeline check). The work left is the time held so far scaled by the share not
    done: the shortest goes first."""
    lane = held_lane()
    if lane is None:
        return
    now = time.monotonic()
    worked_s = _held.worked_s + now - _held.since
    share = min(max(done_share, 0.0), 1.0)
    remaining_s = worked_s * (1.0 - share) / share if share > 0.0 else 0.0
    if not lane.others_first(_owner(), remaining_s):
        return
    lane.release()
    try:
        lane.acquire(quiet=True, remaining_s=remaining_s)  # quiet: may run in a cached function
    except BaseException:
        _held.lane = None
        raise
    _held.worked_s, _held.since = worked_s, time.monotonic()


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
