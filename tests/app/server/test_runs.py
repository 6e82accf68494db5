"""Run slots: a few page runs draw at once, and a run that waits gives its slot up."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from sdlab_ui.server import budget, runs


def _started(target) -> threading.Thread:
    """A daemon thread running ``target``, started (a failing test leaves none behind)."""
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _another_run_draws(within_s: float = 3.0) -> tuple[bool, threading.Thread]:
    """Whether a new run takes a slot and draws within ``within_s`` seconds (and its thread,
    to join once the test lets the others finish)."""
    drew = threading.Event()

    def other_run():
        with runs.slot():
            drew.set()

    thread = _started(other_run)
    return drew.wait(within_s), thread


def test_at_most_runs_at_once_draw_together():
    inside, most, lock = [0], [0], threading.Lock()

    def run():
        with runs.slot():
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.05)
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=run, daemon=True) for _ in range(3 * runs.RUNS_AT_ONCE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert most[0] == runs.RUNS_AT_ONCE, f"{most[0]} runs drew at once"


def test_a_run_that_gives_its_slot_up_lets_another_draw_and_goes_on_without(monkeypatch):
    slots = threading.BoundedSemaphore(1)
    monkeypatch.setattr(runs, "_slots", slots)
    waiting, release, went_on = (threading.Event() for _ in range(3))

    def first():
        with runs.slot():
            runs.give_up()
            waiting.set()
            release.wait(30)  # longer than the check below waits
            assert not runs.holds_slot(), "the run took a slot back: a wait could close a cycle"
            went_on.set()

    waiter = _started(first)
    assert waiting.wait(10), "the first run never gave its slot up"
    drew, drawer = _another_run_draws()
    assert drew, "a run that gave its slot up still kept it"
    release.set()
    waiter.join(10)
    drawer.join(10)
    assert went_on.is_set(), "the run did not go on without its slot"
    assert slots.acquire(blocking=False), "the slot was not returned"
    slots.release()
    with pytest.raises(ValueError):  # a bounded semaphore refuses a release beyond its one slot
        slots.release()


def test_nested_slots_and_giving_up_outside_a_slot_do_not_block(monkeypatch):
    monkeypatch.setattr(runs, "_slots", threading.BoundedSemaphore(1))
    with runs.slot(), runs.slot():  # one slot: a nested call must not wait for itself
        assert runs.holds_slot(), "no slot inside"
    runs.give_up()  # no slot held: nothing to give up
    assert not runs.holds_slot(), "giving up outside a run took a slot"
    assert runs._slots.acquire(blocking=False), "the slot was not returned"
    runs._slots.release()


def test_waiting_for_a_budget_slot_gives_the_run_slot_up(monkeypatch):
    monkeypatch.setattr(runs, "_slots", threading.BoundedSemaphore(1))
    monkeypatch.setattr(budget, "get_script_run_ctx", lambda: object())  # as in a page's run
    monkeypatch.setattr(budget.st, "spinner", lambda *a, **k: contextlib.nullcontext())
    holding, release = threading.Event(), threading.Event()

    def hold_heavy():
        with budget.slot(budget.HEAVY):
            holding.set()
            release.wait(30)  # longer than the check below waits

    def run_needing_heavy():
        with runs.slot(), budget.slot(budget.HEAVY):
            pass

    holder = _started(hold_heavy)
    assert holding.wait(10), "the holder never got the heavy slot"
    needing = _started(run_needing_heavy)
    time.sleep(0.1)  # it is now waiting for the heavy slot
    drew, other = _another_run_draws()
    assert drew, "a run waiting for a budget slot kept the only run slot"
    release.set()
    for thread in (holder, needing, other):
        thread.join(10)


def test_expensive_work_runs_outside_the_run_slots(monkeypatch):
    """A computation under a budget lane (bounded by it) must not also keep a run slot, or a
    second-long grid would hold every other visitor's rerun."""
    monkeypatch.setattr(runs, "_slots", threading.BoundedSemaphore(1))
    computing, release = threading.Event(), threading.Event()

    def expensive_run():
        with runs.slot(), budget.slot(budget.WORK):
            computing.set()
            release.wait(30)  # longer than the check below waits

    worker = _started(expensive_run)
    assert computing.wait(10), "the expensive run never started"
    drew, other = _another_run_draws()
    assert drew, "a run computing under a budget lane kept the only run slot"
    release.set()
    worker.join(10)
    other.join(10)


def test_runs_waiting_on_a_result_another_run_computes_do_not_deadlock(monkeypatch):
    """The deadlock that taking a slot back after a wait made: two runs hold both slots while
    waiting (in Streamlit's cache) for a result a third is computing, and the third, back from
    waiting for a budget slot, waits for a run slot. A run that gave its slot up goes on
    without one, so all three finish."""
    monkeypatch.setattr(runs, "_slots", threading.BoundedSemaphore(2))
    monkeypatch.setattr(budget, "get_script_run_ctx", lambda: object())
    monkeypatch.setattr(budget.st, "spinner", lambda *a, **k: contextlib.nullcontext())
    key_lock = threading.Lock()  # a cached function's per-key lock
    work_full, release_work, computing = threading.Event(), threading.Event(), threading.Event()
    finished = []

    def hold_work():
        with budget.slot(budget.WORK):
            work_full.wait(10)
            release_work.wait(30)

    holders = [threading.Thread(target=hold_work, daemon=True) for _ in range(budget.WORK.slots)]
    for holder in holders:
        holder.start()
    time.sleep(0.1)
    work_full.set()

    def computing_run():
        with runs.slot(), key_lock:
            computing.set()
            with budget.slot(budget.WORK):  # waits: both WORK slots are held
                pass
        finished.append("computing")

    def waiting_run():
        with runs.slot(), key_lock:
            pass
        finished.append("waiting")

    threads = [threading.Thread(target=computing_run, daemon=True)]
    threads[0].start()
    assert computing.wait(10), "the computing run never started"
    threads += [threading.Thread(target=waiting_run, daemon=True) for _ in range(2)]
    for thread in threads[1:]:
        thread.start()
    time.sleep(0.2)  # both waiting runs now hold the two run slots, blocked on the key lock
    release_work.set()
    for thread in threads:
        thread.join(5)
    assert sorted(finished) == ["computing", "waiting", "waiting"], f"deadlocked: {finished}"


def test_a_freed_slot_goes_to_the_session_that_has_drawn_least_lately(monkeypatch):
    """A visitor whose reruns are long (a loop on costly inputs) waits behind one whose reruns
    are short, even when it asked first."""
    slots = runs.FairSlots(1)
    sessions = {"MainThread": "costly", "holder": "holder", "costly": "costly", "cheap": "cheap"}
    monkeypatch.setattr(runs, "_session", lambda: sessions[threading.current_thread().name])
    slots.acquire()  # the costly session's earlier run: long
    time.sleep(0.3)
    slots.release()
    order: list[str] = []
    holder_in, holder_out = threading.Event(), threading.Event()

    def hold():
        slots.acquire()
        holder_in.set()
        holder_out.wait(10)
        slots.release()

    def draw():
        slots.acquire()
        order.append(threading.current_thread().name)
        slots.release()

    holder = threading.Thread(target=hold, name="holder", daemon=True)
    holder.start()
    assert holder_in.wait(10)
    waiters = [threading.Thread(target=draw, name=n, daemon=True) for n in ("costly", "cheap")]
    for thread in waiters:  # the costly session asks first
        thread.start()
        time.sleep(0.1)
    holder_out.set()
    for thread in (holder, *waiters):
        thread.join(10)
    assert order == ["cheap", "costly"], f"the slot went in the order {order}"
