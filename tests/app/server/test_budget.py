"""The process-wide budget: expensive work runs a bounded number at a time, and waiters are told."""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import pytest

from sdlab_model.workload import Workload
from sdlab_ui import cache
from sdlab_ui.server import budget


def _near_saturation(utilization: float, **changes) -> Workload:
    """An unbatched workload at ``utilization``: its queueing evaluation is an exact solve."""
    base = Workload(dynamic_batching=False, **changes)
    return base.with_changes(rate_rps=round(base.capacity_rps * utilization, 6))


class Concurrency:
    """Counts how many calls run at once (the most seen) and the lane each one held.

    With ``together``, each call stays until that many are inside at once (or ``seconds`` have
    passed): calls that can overlap are seen to, however late a busy machine starts a thread.
    """

    def __init__(self, seconds: float, together: int = 0) -> None:
        self.seconds, self.together = seconds, together
        self.running = self.most = 0
        self.lanes: list[str | None] = []
        self._inside = threading.Condition()

    def __call__(self, *args, **kwargs):
        with self._inside:
            self.running += 1
            self.most = max(self.most, self.running)
            lane = budget.held_lane()
            self.lanes.append(lane.name if lane else None)
            self._inside.notify_all()
            if self.together:
                self._inside.wait_for(lambda: self.most >= self.together, timeout=self.seconds)
        if not self.together:
            time.sleep(self.seconds)
        with self._inside:
            self.running -= 1
        return args[0] if args else None


def _run_together(calls) -> float:
    """Run each call in its own thread; the seconds until all are done (at most 30).

    A call that raises fails the test (a thread's exception would otherwise only warn)."""
    errors: list[BaseException] = []

    def guarded(call):
        try:
            call()
        except BaseException as error:  # reported below, in the test's own thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(call,), daemon=True) for call in calls]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "calls did not finish: a slot was never freed"
    assert not errors, f"a concurrent call raised: {errors!r}"
    return time.perf_counter() - started


@pytest.fixture
def fresh_caches():
    for cached in (cache.assessment, cache._simulation, cache._grid, cache.simulated_grid):
        cached.clear()
    yield
    for cached in (cache.assessment, cache._simulation, cache._grid, cache.simulated_grid):
        cached.clear()


def test_heavy_evaluations_run_one_at_a_time(monkeypatch, fresh_caches):
    slow = Concurrency(seconds=0.15)
    monkeypatch.setattr(cache, "judge", slow)
    heavy = [_near_saturation(0.99 + 0.001 * i) for i in range(3)]
    _run_together([lambda w=w: cache.assessment(w, "queueing") for w in heavy])
    assert slow.most == 1, f"{slow.most} exact solves ran at once; the budget allows one"
    assert slow.lanes == ["heavy"] * 3, f"heavy evaluations must hold the heavy lane: {slow.lanes}"


def test_ordinary_evaluations_take_no_slot(monkeypatch, fresh_caches):
    monkeypatch.setattr(cache, "judge", Concurrency(seconds=0.0))
    cache.assessment(Workload(rate_rps=99.0), "queueing")  # first-use imports out of the way
    light = [Workload(rate_rps=100.0 + i) for i in range(3)] + [_near_saturation(0.5)]
    slow = Concurrency(seconds=5.0, together=len(light))
    monkeypatch.setattr(cache, "judge", slow)
    _run_together([lambda w=w: cache.assessment(w, "queueing") for w in light])
    assert slow.most == len(light), "evaluations of a few ms must not queue behind each other"
    assert slow.lanes == [None] * len(light), f"light evaluations held a lane: {slow.lanes}"


def test_simulations_and_grids_share_two_work_slots(monkeypatch, fresh_caches):
    slow = Concurrency(seconds=0.15)
    monkeypatch.setattr(cache, "design_simulation", slow)
    monkeypatch.setattr(cache.grids, "compute_axes_grid", slow)
    calls = [lambda r=r: cache.simulation(Workload(rate_rps=r)) for r in (101.0, 102.0, 103.0)]
    calls += [
        lambda m=m: cache._grid(
            Workload(model_latency_ms=m), "queueing", "rate_rps", "replicas", True
        )
        for m in (21, 22)
    ]
    _run_together(calls)
    assert slow.most == budget.WORK.slots, f"{slow.most} ran at once, the work lane has 2 slots"
    assert set(slow.lanes) == {"work"}, f"simulations and grids must hold a work slot: {slow.lanes}"


def test_the_grid_simulation_holds_the_heavy_lane(monkeypatch, fresh_caches):
    from sdlab_ui.server import worker

    lanes = []

    def call(function, workload, rates, replicas, **kwargs):
        lanes.append(getattr(budget.held_lane(), "name", None))
        shape = (len(replicas), len(rates))
        return np.ones(shape), np.ones((*shape, 2))

    monkeypatch.setattr(worker, "call", call)
    cache.simulated_grid(Workload())
    assert lanes and set(lanes) == {"heavy"}, f"the Heatmaps grid simulation ran in {lanes}"


def _spinners_shown(monkeypatch) -> list[str]:
    """The texts of every spinner budget shows from now on."""
    shown: list[str] = []

    @contextlib.contextmanager
    def spinner(text, **kwargs):
        shown.append(text)
        yield

    monkeypatch.setattr(budget.st, "spinner", spinner)
    return shown


def test_a_visitor_who_must_wait_is_told(monkeypatch):
    shown = _spinners_shown(monkeypatch)
    monkeypatch.setattr(budget, "get_script_run_ctx", lambda: object())  # a page's run
    holding, release = threading.Event(), threading.Event()

    def hold():
        with budget.slot(budget.HEAVY):
            holding.set()
            release.wait(timeout=10)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert holding.wait(timeout=10), "the holder never got the slot"
    threading.Timer(0.2, release.set).start()
    with budget.slot(budget.HEAVY):
        pass
    holder.join(timeout=10)
    assert len(shown) == 1 and "Waiting" in shown[0], f"the waiter was not told: {shown}"


def test_a_worker_thread_waits_for_a_slot_without_a_spinner(monkeypatch):
    shown = _spinners_shown(monkeypatch)
    monkeypatch.setattr(budget, "get_script_run_ctx", lambda: None)  # no page to show it on
    holding, release, got = threading.Event(), threading.Event(), threading.Event()

    def hold():
        with budget.slot(budget.HEAVY):
            holding.set()
            release.wait(timeout=10)

    def wait_for_slot():
        with budget.slot(budget.HEAVY):
            got.set()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert holding.wait(timeout=10), "the holder never got the slot"
    waiter = threading.Thread(target=wait_for_slot, daemon=True)
    waiter.start()
    assert not got.wait(timeout=0.2), "the worker took a slot that was not free"
    release.set()
    assert got.wait(timeout=10), "the worker never got the slot"
    assert shown == [], f"a worker thread tried to show a spinner: {shown}"


def test_a_thread_holding_a_slot_takes_none_again():
    finished = threading.Event()

    def nested():
        with budget.slot(budget.HEAVY), budget.slot(budget.HEAVY), budget.slot(budget.WORK):
            finished.set()

    threading.Thread(target=nested, daemon=True).start()
    assert finished.wait(timeout=5), "nested slots deadlocked"


@pytest.mark.parametrize(
    ("workload", "model", "heavy"),
    [
        (_near_saturation(0.99), "queueing", True),
        (_near_saturation(0.95, gpu=True, replicas=8), "queueing", True),
        (_near_saturation(0.99), "teaching", False),
        (_near_saturation(0.5), "queueing", False),
        (_near_saturation(0.99).with_changes(dynamic_batching=True), "queueing", False),
        (_near_saturation(1.5), "queueing", False),  # unstable: answered without a solve
    ],
)
def test_heavy_evaluations_are_the_exact_solves_near_saturation(workload, model, heavy):
    assert budget.is_heavy_evaluation(workload, model) is heavy, (
        f"{workload} under {model} should {'' if heavy else 'not '}count as heavy"
    )


def _as_sessions(monkeypatch) -> None:
    """Each thread's work counts as the session named by the thread (``thread.name``)."""
    from types import SimpleNamespace

    monkeypatch.setattr(
        budget,
        "get_script_run_ctx",
        lambda: SimpleNamespace(session_id=threading.current_thread().name),
    )
    _spinners_shown(monkeypatch)


def test_a_visitor_looping_on_heavy_work_waits_behind_another_each_time(monkeypatch):
    _as_sessions(monkeypatch)
    order: list[str] = []
    other_waiting = threading.Event()

    def loop():
        for turn in range(3):
            with budget.slot(budget.HEAVY):
                order.append(f"looper {turn}")
                if turn == 0:
                    other_waiting.wait(timeout=10)
                    time.sleep(0.2)  # the other visitor is queued by now

    def other():
        other_waiting.set()
        with budget.slot(budget.HEAVY):
            order.append("other")

    looper = threading.Thread(target=loop, name="looper", daemon=True)
    looper.start()
    time.sleep(0.1)
    waiter = threading.Thread(target=other, name="other", daemon=True)
    waiter.start()
    for thread in (looper, waiter):
        thread.join(timeout=10)
    assert order[:2] == ["looper 0", "other"], (
        f"a freed slot went back to the visitor looping on it before the one waiting: {order}"
    )


def test_a_visitor_holding_a_slot_waits_behind_others_for_a_second(monkeypatch):
    _as_sessions(monkeypatch)
    got: list[str] = []
    releases = {name: threading.Event() for name in ("first", "other")}
    holding = threading.Semaphore(0)

    def hold():
        with budget.slot(budget.WORK):
            holding.release()
            releases[threading.current_thread().name].wait(timeout=10)

    def want():
        with budget.slot(budget.WORK):
            got.append(threading.current_thread().name)

    holders = [threading.Thread(target=hold, name=n, daemon=True) for n in ("first", "other")]
    for thread in holders:
        thread.start()
        assert holding.acquire(timeout=10), "a holder never got its slot"
    waiters = [threading.Thread(target=want, name=n, daemon=True) for n in ("first", "newcomer")]
    for thread in waiters:  # the session holding a slot asks for a second one first
        thread.start()
        time.sleep(0.1)
    assert budget.WORK.waiting == 2, f"{budget.WORK.waiting} waiting, expected both"
    releases["other"].set()
    waiters[1].join(timeout=10)
    releases["first"].set()
    for thread in (*holders, waiters[0]):
        thread.join(timeout=10)
    assert got == ["newcomer", "first"], (
        f"the visitor already holding a slot got the next one before the newcomer: {got}"
    )


def test_a_waiting_visitor_is_told_their_place_in_line(monkeypatch):
    _as_sessions(monkeypatch)
    captions: list[tuple[str, str]] = []

    class Placeholder:
        def caption(self, text):
            captions.append((threading.current_thread().name, text))

        def empty(self):
            pass

    monkeypatch.setattr(budget.st, "empty", Placeholder)
    monkeypatch.setattr(budget, "WAIT_REFRESH_S", 0.05)
    release = threading.Event()
    holding = threading.Event()

    def hold():
        with budget.slot(budget.HEAVY):
            holding.set()
            release.wait(timeout=10)

    def wait():
        with budget.slot(budget.HEAVY):
            time.sleep(0.2)

    holder = threading.Thread(target=hold, name="holder", daemon=True)
    holder.start()
    assert holding.wait(timeout=10)
    waiters = []
    for name in ("w1", "w2", "w3"):
        waiters.append(threading.Thread(target=wait, name=name, daemon=True))
        waiters[-1].start()
        time.sleep(0.1)
    release.set()
    for thread in (holder, *waiters):
        thread.join(timeout=10)
    told = [text for name, text in captions if name == "w3"]
    assert told[0] == "Yours is number 3 in line.", f"w3 was told {told}"
    assert "Yours is next in line." in told, f"w3's place was not updated as the line moved: {told}"


def test_long_work_takes_turns_with_a_short_press_between_its_pieces(monkeypatch):
    _as_sessions(monkeypatch)
    events: list[str] = []
    started = threading.Event()

    def long_work():
        with budget.slot(budget.HEAVY):
            started.set()
            for piece in range(20):
                time.sleep(0.05)
                events.append(f"long {piece}")
                budget.take_turns()

    def short_press():
        with budget.slot(budget.HEAVY):
            events.append("short")

    long = threading.Thread(target=long_work, name="hostile", daemon=True)
    long.start()
    assert started.wait(timeout=10)
    time.sleep(0.12)
    short = threading.Thread(target=short_press, name="visitor", daemon=True)
    short.start()
    for thread in (long, short):
        thread.join(timeout=10)
    assert "short" in events and events.index("short") < 8, (
        f"the short press waited for the whole long computation: {events}"
    )
    assert events[-1] == "long 19" and budget.HEAVY.waiting == 0, events


def test_a_waiting_visitor_who_leaves_gives_their_place_up(monkeypatch):
    _as_sessions(monkeypatch)

    class Stopped(Exception):
        """What Streamlit raises at a run's next element once the visitor has left."""

    class Placeholder:
        calls = 0

        def caption(self, text):
            Placeholder.calls += 1
            if Placeholder.calls > 1:
                raise Stopped

        def empty(self):
            pass

    monkeypatch.setattr(budget.st, "empty", Placeholder)
    monkeypatch.setattr(budget, "WAIT_REFRESH_S", 0.05)
    release, holding, left = threading.Event(), threading.Event(), threading.Event()

    def hold():
        with budget.slot(budget.HEAVY):
            holding.set()
            release.wait(timeout=10)

    def leave():
        try:
            with budget.slot(budget.HEAVY):
                raise AssertionError("a visitor who left got the slot")
        except Stopped:
            left.set()

    holder = threading.Thread(target=hold, name="holder", daemon=True)
    holder.start()
    assert holding.wait(timeout=10)
    threading.Thread(target=leave, name="leaver", daemon=True).start()
    assert left.wait(timeout=5), "the waiting run did not stop while it waited"
    assert budget.HEAVY.waiting == 0, "the visitor who left still holds a place in line"
    release.set()
    holder.join(timeout=10)


def test_a_press_between_long_work_runs_its_pieces_before_the_long_work_resumes(monkeypatch):
    """The lane's recent use decides the turn: a visitor pressing once (a Verify of a few
    pieces) is not made to alternate, piece by piece, with a visitor who has held the lane for
    a while (a hostile loop of long checks)."""
    _as_sessions(monkeypatch)
    events: list[str] = []
    started = threading.Event()

    def long_work():
        with budget.slot(budget.HEAVY):
            started.set()
            for piece in range(30):
                time.sleep(0.05)
                events.append(f"long {piece}")
                budget.take_turns()

    def press():
        with budget.slot(budget.HEAVY):
            for piece in range(4):
                time.sleep(0.05)
                events.append(f"press {piece}")
                budget.take_turns()

    long = threading.Thread(target=long_work, name="hostile", daemon=True)
    long.start()
    assert started.wait(timeout=10)
    time.sleep(0.6)  # the long work has used the lane for over half a second
    visitor = threading.Thread(target=press, name="visitor", daemon=True)
    visitor.start()
    for thread in (long, visitor):
        thread.join(timeout=20)
    pressed = [i for i, event in enumerate(events) if event.startswith("press")]
    assert len(pressed) == 4 and pressed[-1] - pressed[0] == 3, (
        f"the press's pieces alternated with the long work's: {events}"
    )
    assert events[-1] == "long 29" and budget.HEAVY.waiting == 0, events


def test_a_short_press_is_not_made_to_share_the_lane_with_long_work_begun_after_it(monkeypatch):
    """The work left decides the turn before the lane's use: a long computation that starts in
    a new session (as a hostile visitor's next round does, with no use on record) takes one
    piece, then waits for the short press already under way to finish."""
    _as_sessions(monkeypatch)
    events: list[str] = []
    pressing, long_started = threading.Event(), threading.Event()

    def press():
        with budget.slot(budget.HEAVY):
            for piece in range(8):
                budget.take_turns(piece / 8)
                if piece == 3:
                    pressing.set()
                    assert long_started.wait(timeout=10)
                    time.sleep(0.1)  # the long work is in line now
                time.sleep(0.05)
                events.append(f"press {piece}")

    def long_work():
        long_started.set()
        with budget.slot(budget.HEAVY):
            for piece in range(30):
                budget.take_turns(piece / 30)
                time.sleep(0.05)
                events.append(f"long {piece}")

    visitor = threading.Thread(target=press, name="visitor", daemon=True)
    visitor.start()
    assert pressing.wait(timeout=10)
    hostile = threading.Thread(target=long_work, name="hostile", daemon=True)
    hostile.start()
    for thread in (visitor, hostile):
        thread.join(timeout=20)
    pressed = [i for i, event in enumerate(events) if event.startswith("press")]
    assert len(pressed) == 8, events
    assert pressed[-1] - pressed[3] <= 5, (
        f"the press's last pieces alternated with the long work begun after it: {events}"
    )
    assert events[-1] == "long 29" and budget.HEAVY.waiting == 0, events
