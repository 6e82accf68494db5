"""The simulation worker: calls run in a child process, answers and errors come back, and it
stops when idle or killed without leaving the server stuck."""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

import memory_probe
import numpy as np
import pytest

from sdlab_model import grids
from sdlab_model.simulation.simulator import simulate_grid
from sdlab_model.workload import Workload
from sdlab_ui.server import worker


@pytest.fixture
def child():
    process = worker.Worker(idle_s=60.0)
    yield process
    process.stop()


def test_a_call_runs_in_another_process_and_returns_its_answer(child):
    assert child.call(os.getpid) != os.getpid()
    assert child.call(divmod, 17, 5) == (3, 2)


def test_an_exception_in_the_worker_is_raised_to_the_caller(child):
    with pytest.raises(ZeroDivisionError):
        child.call(divmod, 1, 0)
    assert child.call(divmod, 7, 2) == (3, 1), "the worker did not survive its caller's error"


def test_a_print_in_the_worker_does_not_spoil_the_answer(child):
    assert child.call(print, "stray output") is None
    assert child.call(divmod, 9, 4) == (2, 1)


def test_a_killed_worker_fails_the_call_and_the_next_call_starts_a_new_one(child):
    first = child.call(os.getpid)
    os.kill(first, signal.SIGKILL)
    with pytest.raises(worker.WorkerStopped):
        child.call(time.sleep, 0.01)
    second = child.call(os.getpid)
    assert second != first and not _alive(first)


def _has_malloc_trim() -> bool:
    try:
        return hasattr(ctypes.CDLL(None), "malloc_trim")
    except OSError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc")
@pytest.mark.skipif(not _has_malloc_trim(), reason="the worker hands memory back with glibc's")
def test_the_worker_hands_freed_memory_back_after_each_call(child, monkeypatch):
    # The probe's module, importable by the worker's process (it reads PYTHONPATH at its start).
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    before = child.call(memory_probe.rss_mb)
    peak = child.call(memory_probe.churn, 200)
    after = child.call(memory_probe.rss_mb)
    assert peak - before > 150, f"the churn was not resident: {before:.0f} -> {peak:.0f} MB"
    assert after - before < 40, (
        f"the worker kept {after - before:.0f} MB of freed memory after the call "
        f"({before:.0f} -> {peak:.0f} -> {after:.0f} MB)"
    )


def test_an_idle_worker_exits():
    process = worker.Worker(idle_s=0.3)
    pid = process.call(os.getpid)
    deadline = time.monotonic() + 10.0
    # Stopping marks the worker gone, then waits for the process: wait for both.
    while (process.running or _alive(pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process.running, "the worker outlived its idle time"
    assert not _alive(pid), "the idle worker's process is still running"
    assert process.call(os.getpid) != pid, "a call after the idle exit did not start a new worker"
    process.stop()


def test_verify_rows_in_the_worker_are_the_full_grids_rows(child):
    workload = Workload(models_hosted=8, model_latency_ms=30.0)
    rates, replicas = grids.rate_axis(6), grids.replica_axis(5)
    p99, bounds = simulate_grid(workload, rates, replicas, n_requests=2_000, interval=True)
    rows = [
        child.call(simulate_grid, workload, rates, [count], n_requests=2_000, interval=True)
        for count in replicas
    ]
    assert np.array_equal(np.concatenate([row for row, _ in rows]), p99)
    assert np.array_equal(np.concatenate([ci for _, ci in rows]), bounds)


def test_a_simulating_worker_loads_no_ui_or_data_frame_library(child):
    """The worker's memory is the server's while it runs: a Verify row there must not pull in
    Streamlit, plotly or pandas (pandas and pyarrow alone were ~65 MB of it)."""
    child.call(simulate_grid, Workload(), grids.rate_axis(3), [2], n_requests=1_000, interval=True)
    loaded = child.call(eval, "{name.split('.')[0] for name in __import__('sys').modules}")
    assert "numba" in loaded, "the simulation ran without its compiled kernels"
    heavy = loaded & {"streamlit", "plotly", "pandas", "pyarrow"}
    assert not heavy, f"the simulation worker loaded {sorted(heavy)}"


def test_a_job_runs_a_step_at_a_time_with_other_calls_between_its_steps(child):
    seen = []

    def between(value):
        seen.append((value, child.call(divmod, 9, 2)))  # the worker is free between steps

    assert child.run_steps(iter, range(3), between=between) is None
    assert seen == [(0, (4, 1)), (1, (4, 1)), (2, (4, 1))]
    assert child.call(worker._kept_jobs) == 0, "a finished job is still kept"


def test_an_abandoned_job_is_dropped_from_the_worker(child):
    def leave(value):
        raise KeyboardInterrupt  # a visitor gone in the middle (Streamlit stops the run)

    with pytest.raises(KeyboardInterrupt):
        child.run_steps(iter, range(5), between=leave)
    assert child.call(worker._kept_jobs) == 0, "the abandoned job is still kept"


def test_a_job_whose_worker_was_killed_between_steps_fails_with_worker_stopped(child):
    with pytest.raises(worker.WorkerStopped):
        child.run_steps(iter, range(3), between=lambda value: os.kill(child.pid, signal.SIGKILL))
    assert child.call(divmod, 5, 2) == (2, 1), "no new worker after the killed one"


def test_a_worker_keeping_a_paused_job_does_not_exit_idle():
    process = worker.Worker(idle_s=0.2)
    pids = []

    def pause(value):
        pids.append(process.pid)
        time.sleep(1.0)  # five idle times, the job paused in the worker

    try:
        assert process.run_steps(iter, range(2), between=pause) is None
        assert pids[0] == pids[1] and pids[0] is not None, "the worker exited mid-job"
    finally:
        process.stop()


def test_the_timeline_check_run_in_steps_in_the_worker_is_the_in_process_check(child):
    from sdlab_model.timeline import AutoscalerConfig, TimelineInputs, TrafficShape, run_timeline
    from sdlab_model.timeline.check import simulate_timeline, timeline_check_steps

    inputs = TimelineInputs(
        workload=Workload(rate_rps=800, replicas=4),
        traffic=TrafficShape(kind="spike", base_rate_rps=800, factor=3, at_s=60),
        autoscaler=AutoscalerConfig(kind="hpa", min_replicas=2, max_replicas=40),
        duration_s=180,
    )
    result = run_timeline(inputs)
    progress = []
    stepped = child.run_steps(timeline_check_steps, result, 5, 20_000, between=progress.append)
    here = simulate_timeline(result, seed=5, chunk_requests=20_000)
    assert len(progress) > 3 and progress[-1][0] == progress[-1][1] == here.requests
    assert np.array_equal(stepped.simulated_p99_ms, here.simulated_p99_ms, equal_nan=True)
    assert stepped.simulated_requests_over == here.simulated_requests_over


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers; its parent has reaped it once waitpid says so.
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False
