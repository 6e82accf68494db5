"""Queueing model of the serving fleet: the lab's default latency model.

The fleet is one FCFS queue feeding ``workload.servers`` identical servers with Poisson arrivals
and deterministic batch service (``sdlab_model.workload`` describes the system).

- Without batching it is an M/D/c queue, solved exactly (``sdlab_model.queues.mdc``): p50, p95
  and p99 are exact, not approximations.
- With dynamic batching, batch formation plus a queue of batches (``sdlab_model.queues.batching``),
  checked against simulation and flagged ``approximate`` where it is not within 15%.
- At or beyond capacity every percentile is ``inf`` and ``is_stable`` is False.

``p99_grid`` gives the p99 over rates x replicas for heatmaps, vectorized: without batching from
the tabulated exact tail constant (``sdlab_model.queues.mdc_grid``, within 1% of the exact p99),
with batching from the same formulas as the point model.
"""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np

from sdlab_model.latency import LatencyResult
from sdlab_model.queues import batching, erlang, fleet, mdc, mdc_grid
from sdlab_model.workload import Workload

QUANTILES = (0.5, 0.95, 0.99)
_QUANTILE_ARRAY = np.array(QUANTILES)
_QUANTILE_ARRAY.setflags(write=False)


def latency(workload: Workload) -> LatencyResult:
    """p50/p95/p99 of end-to-end latency (queue wait + batch formation + service), in ms.

    Approximations: none without batching (exact M/D/c) except beyond utilization ~0.994, where
    the heavy-traffic tail is used and the result says ``approximate``; with batching see
    ``sdlab_model.queues.batching.batched_latency``.

    Sources: Crommelin (1932) and Franx (2001) for M/D/c; Triton's dynamic batcher for the
    batching rule; ``scripts/accuracy_report.py`` for the measured accuracy.
    """
    capacity = workload.capacity_rps
    utilization = workload.rate_rps / capacity
    if utilization >= 1.0:
        return _unstable(workload, capacity, utilization)
    if not is_pooled_model(workload):
        return _fleet(workload, capacity, utilization)
    if workload.effective_max_batch_size == 1:
        return _unbatched(workload, capacity, utilization)
    return _batched(workload, capacity, utilization)


def is_pooled_model(workload: Workload) -> bool:
    """True where the fleet-wide queue model applies as it always has: one central queue fed
    by Poisson arrivals. Everything else goes through ``sdlab_model.queues.fleet``."""
    return workload.is_central_queue and workload.arrival_cv == 1.0


def p99_grid(workload: Workload, rates_rps: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """p99 (ms) over rates x replicas, shape ``(len(replicas), len(rates))``; ``inf`` if unstable.

    Every other input is the workload's. No Python loop per cell.
    """
    rates = np.asarray(rates_rps, dtype=float).ravel()[None, :]
    counts = np.asarray(replicas, dtype=float).ravel()[:, None]
    return p99_pairs(workload, rates, counts)


def p99_pairs(workload: Workload, rates_rps: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """p99 (ms) at each (rate, replica count) the two arrays broadcast to; ``inf`` if unstable.

    ``p99_grid`` is this over a row of rates and a column of counts; equal-shaped arrays give
    one p99 per pair (a search that tries a different count for each rate). Same formulas.
    """
    rates = np.asarray(rates_rps, dtype=float)
    counts = np.asarray(replicas, dtype=float)
    if not is_pooled_model(workload):
        return _fleet_grid(workload, rates, counts)
    servers = counts * workload.slots_per_replica
    size = workload.effective_max_batch_size
    full_batch_ms = workload.batch_service_ms(size)
    capacity = servers * size * 1000.0 / full_batch_ms
    utilization = rates / capacity
    stable = utilization < 1.0
    if size == 1:
        wait_units = mdc_grid.p99_wait_units(servers, np.where(stable, utilization, 0.5))
        p99 = full_batch_ms * (1.0 + wait_units)
    else:
        # In a grid the rates stay one row (not broadcast), so the batching model solves per rate
        # where it can; unstable cells come out inf and are masked below anyway.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            p99 = _batched_quantiles(workload, rates / 1000.0, servers, 0.99).quantile_ms
    return np.where(stable, np.broadcast_to(p99, utilization.shape), np.inf)


def mmc_p99_ms(servers: int, rate_rps: float, mean_service_ms: float) -> float:
    """The exponential-service variant (M/M/c) of the same FCFS queue: p99 of W + S in ms.

    For comparison only: inference times are near-constant, and M/M/c overstates their p99.
    """
    return erlang.mmc_p99_ms(servers, rate_rps, mean_service_ms)


def mmc_wait_quantile_ms(servers: int, rate_rps: float, mean_service_ms: float, q: float) -> float:
    """The ``q`` quantile of the M/M/c queueing delay in ms (see ``sdlab_model.queues.erlang``)."""
    return erlang.mmc_wait_quantile_ms(servers, rate_rps, mean_service_ms, q)


def _unstable(workload: Workload, capacity: float, utilization: float) -> LatencyResult:
    size = workload.effective_max_batch_size
    window = float(workload.batch_window_ms) if size > 1 else 0.0
    return LatencyResult(
        p50_ms=math.inf,
        p95_ms=math.inf,
        p99_ms=math.inf,
        compute_ms=workload.batch_service_ms(size),
        batch_wait_ms=window,
        queue_ms=math.inf,
        capacity_rps=capacity,
        utilization=utilization,
        is_stable=False,
        mean_batch_size=float(size),
        accuracy="exact",
        accuracy_note=(
            f"{workload.rate_rps:g} req/s is at or beyond capacity ({capacity:.4g} req/s with "
            "every server on full batches): the queue grows without bound."
        ),
    )


def _unbatched(workload: Workload, capacity: float, utilization: float) -> LatencyResult:
    service_ms = workload.single_request_ms
    servers = workload.servers
    wait = mdc.MdcWait.solve(servers, servers * utilization)
    if wait.is_exact:
        waits = [wait.wait_quantile(q) for q in QUANTILES]
        accuracy, note = (
            "exact",
            (f"Exact M/D/{servers} waiting-time distribution (Crommelin–Franx); no approximation."),
        )
    else:
        log_constant = float(mdc_grid.log_tail_constant(np.array(servers), np.array(utilization)))
        waits = [max(0.0, (log_constant - math.log(1.0 - q)) / wait.decay_rate) for q in QUANTILES]
        accuracy, note = (
            "approximate",
            (
                f"Utilization {utilization:.4f} is too close to 1 for the exact solution's state "
                "space; the exact heavy-traffic tail C·e^(−ηt) is used."
            ),
        )
    p50, p95, p99 = (service_ms * (1.0 + w) for w in waits)
    return LatencyResult(
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        compute_ms=service_ms,
        batch_wait_ms=0.0,
        queue_ms=p99 - service_ms,
        capacity_rps=capacity,
        utilization=utilization,
        is_stable=True,
        mean_batch_size=1.0,
        accuracy=accuracy,
        accuracy_note=note,
    )


def _batched_quantiles(
    workload: Workload, rate_per_ms: np.ndarray, servers: np.ndarray, q: float
) -> batching.BatchedLatency:
    return batching.batched_latency(
        rate_per_ms,
        servers,
        workload.single_request_ms,
        workload.batch_overhead_share,
        workload.effective_max_batch_size,
        workload.batch_window_ms,
        q,
    )


def _batched(workload: Workload, capacity: float, utilization: float) -> LatencyResult:
    rate = np.array(workload.rate_rps / 1000.0)
    servers = np.array(float(workload.servers))
    parts = [_batched_quantiles(workload, rate, servers, q) for q in QUANTILES]
    p50, p95, p99 = (float(part.quantile_ms) for part in parts)
    tail = parts[-1]
    compute = float(tail.compute_ms)
    queue = float(tail.queue_ms)
    saturation = float(tail.saturation)
    if workload.servers < batching.MIN_ACCURATE_SERVERS:
        accuracy, note = (
            "approximate",
            (
                f"With {workload.servers} server(s) a busy server delays whole batches; "
                "the batching model is outside its 15% target here, "
                "so check it against simulation."
            ),
        )
    elif saturation >= batching.saturation_limit(workload.batch_overhead_share):
        accuracy, note = (
            "approximate",
            (
                "Batches are server-limited (busy servers, not the window, set their size of "
                f"{float(tail.mean_batch_size):.1f}): the model is outside its 15% target here."
            ),
        )
    else:
        accuracy, note = (
            "validated",
            (
                "Window-limited batching: formation plus an Erlang-arrival batch queue, within 15% "
                "of simulation in this regime."
            ),
        )
    formation, queue = _formation_and_queue(workload, p99, compute, queue)
    return LatencyResult(
        p50_ms=min(p50, p95),
        p95_ms=min(p95, p99),
        p99_ms=p99,
        compute_ms=compute,
        batch_wait_ms=formation,
        queue_ms=queue,
        capacity_rps=capacity,
        utilization=utilization,
        is_stable=True,
        mean_batch_size=float(tail.mean_batch_size),
        accuracy=accuracy,
        accuracy_note=note,
    )


def _fleet_parts(
    workload: Workload, rate_per_ms, replicas, q: float | np.ndarray, use_table: bool = False
) -> fleet.FleetLatency:
    if workload.effective_max_batch_size == 1:
        return fleet.unbatched_quantile(workload, rate_per_ms, replicas, q)
    return fleet.batched_quantile(workload, rate_per_ms, replicas, q, use_table=use_table)


def _fleet_grid(workload: Workload, rates: np.ndarray, counts: np.ndarray) -> np.ndarray:
    size = workload.effective_max_batch_size
    servers = counts * workload.slots_per_replica
    capacity = servers * size * 1000.0 / workload.batch_service_ms(size)
    stable = rates < capacity
    rate_grid, count_grid = np.broadcast_arrays(rates / 1000.0, counts)
    if stable.all():  # a replica search's usual grid: nothing to mask, and no errstate (as _fleet)
        return _fleet_parts(
            workload, rate_grid, count_grid, 0.99, use_table=True
        ).quantile_ms.copy()
    p99 = np.full(stable.shape, np.inf)
    if np.any(stable):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            parts = _fleet_parts(
                workload, rate_grid[stable], count_grid[stable], 0.99, use_table=True
            )
        p99[stable] = parts.quantile_ms
    return p99


def _fleet_exact_wait(
    workload: Workload, parts: fleet.FleetLatency, utilization: float
) -> list[float] | None:
    """Without batching and with a whole number of pooled servers, the exact M/D/n waits (in
    units of the service time)."""
    if workload.effective_max_batch_size != 1:
        return None
    # Gamma arrivals of whole shape k are Erlang-k, and E_k/D/c waits exactly as M/D/(kc) at k
    # times the rate. A random split of a bursty stream is not Gamma, and least request is only
    # approximated by pooling.
    shape = float(fleet.arrival_shape(workload, np.array(float(workload.replicas))))
    erlang_stream = workload.lb_policy in ("round_robin", "central_queue") or (
        workload.lb_policy == "random" and workload.arrival_cv == 1.0
    )
    if not erlang_stream or shape < 1.0 or abs(shape - round(shape)) > 1e-9:
        return None
    pooled = float(parts.pooled_servers)
    # Every replica runs at the fleet's utilization (rate over capacity), the pooled queue too.
    wait = mdc.MdcWait.solve(int(pooled), pooled * utilization)
    if not wait.is_exact:
        return None
    return [wait.wait_quantile(q) for q in QUANTILES]


def _formation_and_queue(
    workload: Workload, p99: float, compute: float, queue: float
) -> tuple[float, float]:
    """The p99's waiting split into batch formation and queueing: a batch's oldest request waits
    at most the window for it to form; beyond that (slots busy, batches held until one frees)
    it is waiting for a slot, which is queueing."""
    if not math.isfinite(p99):
        return workload.batch_window_ms, queue
    waiting = max(0.0, p99 - compute - queue)
    formation = min(waiting, float(workload.batch_window_ms)) if workload.dynamic_batching else 0.0
    return formation, p99 - compute - formation


_FLEET_FIELDS = tuple(field.name for field in fields(fleet.FleetLatency))


def _fleet(workload: Workload, capacity: float, utilization: float) -> LatencyResult:
    # The three quantiles as three cells of one call: most of the work does not depend on the
    # quantile, and each cell is bit for bit its own one-quantile call (fleet._tails).
    cells = len(QUANTILES)
    rate = np.full(cells, workload.rate_rps / 1000.0)
    replicas = np.full(cells, float(workload.replicas))
    together = _fleet_parts(workload, rate, replicas, _QUANTILE_ARRAY)
    tail = fleet.FleetLatency(*(getattr(together, name)[-1] for name in _FLEET_FIELDS))
    exact = _fleet_exact_wait(workload, tail, utilization)
    if exact is not None:  # in units of the service time, combined as _unbatched does
        p50, p95, p99 = (workload.single_request_ms * (1.0 + wait) for wait in exact)
    else:
        p50, p95, p99 = (float(value) for value in together.quantile_ms)
    compute = float(tail.compute_ms)
    queue = p99 - float(tail.quantile_ms) + float(tail.queue_ms)
    accuracy, note = fleet.accuracy(workload, tail, exact is not None)
    formation, queue = _formation_and_queue(workload, p99, compute, queue)
    return LatencyResult(
        p50_ms=min(p50, p95),
        p95_ms=min(p95, p99),
        p99_ms=p99,
        compute_ms=compute,
        batch_wait_ms=formation,
        queue_ms=queue,
        capacity_rps=capacity,
        utilization=utilization,
        is_stable=True,
        mean_batch_size=float(tail.mean_batch_size),
        accuracy=accuracy,
        accuracy_note=note,
    )
