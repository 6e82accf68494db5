"""Run slots: a few page runs draw at once, and a run that waits gives its slot up."""

from __future__ import annotations

import contextlib
import threading
import time

from sdlab_ui import budget, runs


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


def test_a_waiting_run_lets_another_draw_and_then_goes_on(monkeypatch):
    monkeypatch.setattr(runs, "_slots", threading.BoundedSemaphore(1))
    waiting, release, other_drew, resumed = (threading.Event() for _ in range(4))

    def first():
        with runs.slot():
            with runs.paused():
                waiting.set()
                release.wait(30)  # longer than the check below waits
            assert runs.holds_slot(), "the run went on without its slot"
            resumed.set()

    def second():
        with runs.slot():
            other_drew.set()

    waiter = threading.Thread(target=first, daemon=True)
    waiter.start()
    assert waiting.wait(10), "the first run never paused"
    drawer = threading.Thread(target=second, daemon=True)
    drawer.start()
    assert other_drew.wait(3), "a paused run kept its slot: the other run could not draw"
    release.set()
    waiter.join(10)
    drawer.join(10)
    assert resumed.is_set(), "the paused run never took its slot back"


def test_nested_slots_and_pauses_outside_a_slot_do_not_block(monkeypatch):
    monkeypatch.setattr(runs, "_slots", threading.BoundedSemaphore(1))
    with runs.slot(), runs.slot():  # one slot: a nested call must not wait for itself
        assert runs.holds_slot(), "no slot inside"
    with runs.paused():  # no slot held: nothing to give up
        assert not runs.holds_slot(), "a pause outside a run took a slot"
    assert runs._slots.acquire(blocking=False), "the slot was not returned"
    runs._slots.release()


def test_waiting_for_a_budget_slot_gives_the_run_slot_up(monkeypatch):
    monkeypatch.setattr(runs, "_slots", threading.BoundedSemaphore(1))
    monkeypatch.setattr(budget, "get_script_run_ctx", lambda: object())  # as in a page's run
    monkeypatch.setattr(budget.st, "spinner", lambda *a, **k: contextlib.nullcontext())
    holding, release, other_drew = threading.Event(), threading.Event(), threading.Event()

    def hold_heavy():
        with budget.slot(budget.HEAVY):
            holding.set()
            release.wait(30)  # longer than the check below waits

    def run_needing_heavy():
        with runs.slot(), budget.slot(budget.HEAVY):
            pass

    def other_run():
        with runs.slot():
            other_drew.set()

    holder = threading.Thread(target=hold_heavy, daemon=True)
    holder.start()
    assert holding.wait(10), "the holder never got the heavy slot"
    needing = threading.Thread(target=run_needing_heavy, daemon=True)
    needing.start()
    time.sleep(0.1)  # it is now waiting for the heavy slot
    other = threading.Thread(target=other_run, daemon=True)
    other.start()
    assert other_drew.wait(3), "a run waiting for a budget slot kept the only run slot"
    release.set()
    for thread in (holder, needing, other):
        thread.join(10)
