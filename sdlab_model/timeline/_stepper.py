"""The time-stepped model's compiled loop: fluid backlog, cold starts and the autoscaler's rules.

Imported lazily by ``sdlab_model.timeline.model`` (numba compiles on first use; the compiled code
is cached on disk where it can be). With ``NUMBA_DISABLE_JIT=1`` it runs as plain Python with the
same numbers.

Why a compiled loop: the autoscaler reads metrics that depend on the backlog, and the backlog
depends on the replicas the autoscaler started, so the steps cannot be computed independently;
a day at 1 s steps is 86,400 of them.

Replicas are tracked by the step their start was decided at (a cohort): a cohort started at step
``s`` serves from ``s + cold_steps`` and its CPU metric counts in the HPA from
``s + counted_steps`` (``counted_steps >= cold_steps``). A scale-down removes the newest
cohorts first (still starting, then ready for the shortest time), as a ReplicaSet does; the
initial fleet is removed last.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

NONE, HPA, KPA, RAY = 0, 1, 2, 3

# Indices into the float parameter vector (one vector keeps the kernel's signature stable).
P_TARGET = 0  # HPA target utilization | KPA target concurrency per pod | Ray target ongoing
P_TOLERANCE = 1  # HPA
P_PANIC_THRESHOLD = 2  # KPA
P_MAX_SCALE_UP_RATE = 3  # KPA
P_MAX_SCALE_DOWN_RATE = 4  # KPA
N_PARAMS = 5

# Indices into the integer parameter vector, all in steps.
I_PERIOD = 0  # decision period: HPA sync, KPA tick (Ray decides every step)
I_WINDOW = 1  # HPA metric window | KPA stable window | Ray look-back period
I_PANIC_WINDOW = 2  # KPA
I_STABILIZATION = 3  # HPA scale-down stabilization
I_RATE_PERIOD = 4  # HPA scale-up policy period
I_UP_DELAY = 5  # Ray
I_DOWN_DELAY = 6  # Ray
I_SCALE_UP_PODS = 7  # HPA
I_SYNC_PHASE = 8  # HPA: syncs at steps k > 0 with (k - phase) % period == 0
I_SCRAPE_PHASE = 9  # HPA: metrics-server scrapes at steps s with (s - phase) % interval == 0
I_SCRAPE_INTERVAL = 10  # HPA: metrics-server's resolution (0: a fresh scrape at every sync)
N_INT_PARAMS = 11


def _compile(function):
    """``njit(cache=True, nogil=True)``, or without the disk cache where none is writable."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


def _window_mean(values: np.ndarray, end: int, length: int) -> float:
    """Mean of ``values[end - length : end]`` over the steps that exist (at least one)."""
    start = max(0, end - length)
    if end <= start:
        return values[0]
    total = 0.0
    for index in range(start, end):
        total += values[index]
    return total / (end - start)


window_mean = _compile(_window_mean)


def _last_scrape(k, ints):
    """The step of the newest metrics-server scrape at or before step ``k`` (its CPU rate covers
    the metric window before it); ``k`` itself when scrapes are not phased."""
    interval = ints[I_SCRAPE_INTERVAL]
    if interval <= 0:
        return k
    return k - (k - ints[I_SCRAPE_PHASE]) % interval


last_scrape = _compile(_last_scrape)


def _counted_at_scrape(counted, started, scrape, k, counted_steps):
    """Replicas counted at step ``k`` less those whose metric became usable after the scrape
    the HPA reads: their newest metric predates the window groupPods requires."""
    seen = counted
    for j in range(max(scrape + 1, counted_steps), k + 1):
        seen -= started[j - counted_steps]
    return seen


counted_at_scrape = _compile(_counted_at_scrape)


def _hpa_raw(k, total, counted, busy, floats, ints):
    """The HPA's replica calculator (``GetResourceReplicas``) on the metric of the scrape at
    step ``k``: its recommendation before the stabilization window and rate limits."""
    if counted <= 0:
        return total  # no usable metrics: the HPA reports an error and leaves the scale alone
    utilization = window_mean(busy, k, max(1, ints[I_WINDOW]))
    target = floats[P_TARGET]
    tolerance = floats[P_TOLERANCE]
    ratio = utilization / target
    ignored = total - counted
    if ignored > 0 and ratio > 1.0:
        # On a scale-up, pods without usable metrics count as 0%.
        rebalanced = utilization * counted / (target * total)
        if abs(1.0 - rebalanced) <= tolerance or rebalanced < 1.0:
            return total
        return math.ceil(rebalanced * total)
    if abs(1.0 - ratio) <= tolerance:
        return total
    return math.ceil(ratio * counted)


hpa_raw = _compile(_hpa_raw)


def _hpa(k, total, raw, ints, rec_step, rec_value, rec_count, total_at, min_replicas, max_replicas):
    """The HPA's decision at a sync: the calculator's recommendation, stabilized on the way down
    (the highest of the window), limited on the way up (``max(+4 pods, x2)`` per period), within
    the bounds (``normalizeDesiredReplicasWithBehaviors``)."""
    down = raw
    for index in range(rec_count - 1, -1, -1):  # newest first; stop at the window's edge
        if rec_step[index] <= k - ints[I_STABILIZATION]:
            break
        down = max(down, rec_value[index])
    stabilized = total
    if stabilized < raw:
        stabilized = raw
    if stabilized > down:
        stabilized = down
    period_start = total_at[max(0, k - ints[I_RATE_PERIOD])] if k >= ints[I_RATE_PERIOD] else total
    period_start = min(period_start, total)
    up_limit = max(period_start + ints[I_SCALE_UP_PODS], 2 * period_start)
    return min(max(min(stabilized, up_limit), min_replicas), max_replicas)


hpa_decision = _compile(_hpa)


def _run(
    rates_rps: np.ndarray,
    step_s: float,
    capacity_per_replica_rps: float,
    time_in_system_s: float,
    queue_limit: float,
    kind: int,
    floats: np.ndarray,
    ints: np.ndarray,
    initial_replicas: int,
    min_replicas: int,
    max_replicas: int,
    cold_steps: int,
    counted_steps: int,
):
    """One timeline. Returns per-step arrays: ready, starting, backlog at the step's start and
    end, served, dropped, busy share, concurrency, and the steps at which a decision changed the
    replica count (``decided``: the new total, else -1)."""
    n = rates_rps.shape[0]
    ready_out = np.zeros(n, np.int64)
    starting_out = np.zeros(n, np.int64)
    backlog_start = np.zeros(n)
    backlog_end = np.zeros(n)
    served_out = np.zeros(n)
    dropped_out = np.zeros(n)
    busy = np.zeros(n)
    concurrency = np.zeros(n)
    decided = np.full(n, -1, np.int64)
    total_at = np.zeros(n, np.int64)

    started = np.zeros(n, np.int64)  # replicas alive per start step
    stack = np.zeros(n, np.int64)  # start steps with replicas alive, newest on top
    stack_size = 0
    initial = initial_replicas
    ready = initial_replicas
    counted = initial_replicas
    starting = 0
    backlog = 0.0

    # HPA recommendations (step, value) for the scale-down stabilization window.
    rec_step = np.zeros(n, np.int64)
    rec_value = np.zeros(n, np.int64)
    rec_count = 0
    # KPA panic state; Ray delay counter and target.
    panic_since = -1
    max_panic_pods = 0
    ray_counter = 0

    for k in range(n):
        # Cohorts whose cold start (or HPA metric delay) ends now, before the decision sees them.
        if cold_steps > 0 and k - cold_steps >= 0:
            arriving = started[k - cold_steps]
            ready += arriving
            starting -= arriving
        if counted_steps > 0 and k - counted_steps >= 0:
            counted += started[k - counted_steps]
        total = ready + starting
        desired = total
        period = max(1, ints[I_PERIOD])
        if kind == HPA and k > 0 and (k - ints[I_SYNC_PHASE]) % period == 0:
            scrape = last_scrape(k, ints)
            seen = counted_at_scrape(counted, started, scrape, k, counted_steps)
            raw = hpa_raw(scrape, total, seen, busy, floats, ints)
            desired = hpa_decision(
                k,
                total,
                raw,
                ints,
                rec_step,
                rec_value,
                rec_count,
                total_at,
                min_replicas,
                max_replicas,
            )
            rec_step[rec_count] = k
            rec_value[rec_count] = raw
            rec_count += 1
        elif kind == KPA and k > 0 and k % period == 0:
            stable = window_mean(concurrency, k, ints[I_WINDOW])
            panic_value = window_mean(concurrency, k, max(1, ints[I_PANIC_WINDOW]))
            ready_count = max(1.0, float(ready))
            max_up = math.ceil(floats[P_MAX_SCALE_UP_RATE] * ready_count)
            max_down = math.floor(ready_count / floats[P_MAX_SCALE_DOWN_RATE])
            stable_pods = math.ceil(stable / floats[P_TARGET])
            panic_pods = math.ceil(panic_value / floats[P_TARGET])
            desired_stable = min(max(stable_pods, max_down), max_up)
            desired_panic = min(max(panic_pods, max_down), max_up)
            over = panic_pods / ready_count >= floats[P_PANIC_THRESHOLD]
            if over:
                panic_since = k
            elif panic_since >= 0 and panic_since + ints[I_WINDOW] < k:
                panic_since = -1
                max_panic_pods = 0
            desired = desired_stable
            if panic_since >= 0:
                desired = max(desired_stable, desired_panic)
                if desired > max_panic_pods:
                    max_panic_pods = desired
                desired = max_panic_pods
            desired = min(max(desired, min_replicas), max_replicas)
        elif kind == RAY and k > 0:
            ongoing = window_mean(concurrency, k, ints[I_WINDOW])
            wanted = total
            if ready > 0:
                wanted = math.ceil(ongoing / floats[P_TARGET])
            wanted = min(max(wanted, min_replicas), max_replicas)
            if wanted > total:
                if ray_counter < 0:
                    ray_counter = 0
                ray_counter += 1
                if ray_counter > ints[I_UP_DELAY]:
                    ray_counter = 0
                    desired = wanted
            elif wanted < total:
                if ray_counter > 0:
                    ray_counter = 0
                ray_counter -= 1
                if ray_counter < -ints[I_DOWN_DELAY]:
                    ray_counter = 0
                    desired = max(1, wanted)
            else:
                ray_counter = 0

        if desired > total:
            started[k] += desired - total
            stack[stack_size] = k
            stack_size += 1
            starting += desired - total
            decided[k] = desired
        elif desired < total:
            remove = total - desired
            while remove > 0 and stack_size > 0:
                cohort = stack[stack_size - 1]
                take = min(remove, started[cohort])
                started[cohort] -= take
                remove -= take
                if cohort + cold_steps > k:
                    starting -= take
                else:
                    ready -= take
                    if cohort + counted_steps <= k:
                        counted -= take
                if started[cohort] == 0:
                    stack_size -= 1
            if remove > 0:
                initial -= remove
                ready -= remove
                counted -= remove
            decided[k] = desired

        if cold_steps == 0:  # a zero cold start serves in the step it was decided
            ready += started[k]
            starting -= started[k]
        if counted_steps == 0:
            counted += started[k]
        total_at[k] = ready + starting

        capacity = ready * capacity_per_replica_rps * step_s
        arrivals = rates_rps[k] * step_s
        served = min(backlog + arrivals, capacity)
        after = backlog + arrivals - served
        dropped = 0.0
        if after > queue_limit:
            dropped = after - queue_limit
            after = queue_limit
        ready_out[k] = ready
        starting_out[k] = starting
        backlog_start[k] = backlog
        backlog_end[k] = after
        served_out[k] = served
        dropped_out[k] = dropped
        busy[k] = served / capacity if capacity > 0.0 else 0.0
        concurrency[k] = 0.5 * (backlog + after) + served / step_s * time_in_system_s
        backlog = after
    return (
        ready_out,
        starting_out,
        backlog_start,
        backlog_end,
        served_out,
        dropped_out,
        busy,
        concurrency,
        decided,
    )


run = _compile(_run)
