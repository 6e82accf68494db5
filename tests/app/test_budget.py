"""The process-wide budget: expensive work runs a bounded number at a time, and waiters are told."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from sdlab_model.workload import Workload
from sdlab_ui import budget, cache


def _near_saturation(utilization: float, **changes) -> Workload:
    """An unbatched workload at ``utilization``: its queueing evaluation is an exact solve."""
    base = Workload(dynamic_batching=False, **changes)
    return base.with_changes(rate_rps=round(base.capacity_rps * utilization, 6))


class Concurrency:
    """Counts how many calls run at once (the most seen) and the lane each one held."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.running = self.most = 0
        self.lanes: list[str | None] = []
        self._lock = threading.Lock()

    def __call__(self, *args, **kwargs):
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
            lane = budget.held_lane()
            self.lanes.append(lane.name if lane else None)
        time.sleep(self.seconds)
        with self._lock:
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
    slow = Concurrency(seconds=0.15)
    monkeypatch.setattr(cache, "judge", slow)
    light = [Workload(rate_rps=100.0 + i) for i in range(3)] + [_near_saturation(0.5)]
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
    from sdlab_model.simulation import simulator

    slow = Concurrency(seconds=0.05)
    monkeypatch.setattr(simulator, "simulate_grid", slow)
    cache.simulated_grid(Workload())
    assert slow.lanes == ["heavy"], f"the Heatmaps grid simulation ran in {slow.lanes}"


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
