"""Compiled per-cell loops of ``fleet.batched_quantile`` and ``fleet.unbatched_quantile``.

Loaded lazily (``sdlab_model.queues.kernels``) by ``fleet`` so that ``import sdlab_model``
imports no numba and compiles nothing; ``python3 dev.py run`` compiles them into numba's disk
cache before the server starts (``sdlab_model.queues.warmup``).

Why compiled: one fresh ``evaluate`` calls ``batched_quantile`` about five times on 1 to 32 cells
of 1 to 12 model classes. The numpy version ran some 60 array operations per call (plus up to
32 bisection steps of several more for the holding time), each costing its per-call
overhead, about 0.25 ms per call whatever the number of cells. This is the same arithmetic as
a loop over cells and classes, in the same order of operations and with the same stopping
rules: a sum over classes adds in numpy's pairwise order (``_tail_kernel.row_sum``), the
minimum and maximum keep numpy's ``nan`` (``_minimum``, ``_maximum``), and the steps numpy ran
over every cell at once still do (``decay_rate_cells`` iterates until every cell has settled).
On a heatmap's grid the loops are short and run cell after cell, as numpy's operations did, so
that the processor overlaps cells. ``tests/sdlab_model/queues/test_fleet_kernel.py`` checks both
against the numpy versions, kept in ``tests/sdlab_model/queues/numpy_reference.py``.

Compiled with numpy's error model (a division by zero gives ``inf`` or ``nan``); with
``NUMBA_DISABLE_JIT=1`` the same functions run as plain Python.
"""

from __future__ import annotations

import math

import numpy as np

from sdlab_model.policies import Policy
from sdlab_model.queues._tail_kernel import (
    compile_kernel,
    decay_rate_cells,
    log_tail_constant_cells,
    mixture_quantile_rows,
    quantile_from_table_cells,
    row_sum,
)

POLICY_RANDOM = int(Policy.RANDOM)
POLICY_ROUND_ROBIN = int(Policy.ROUND_ROBIN)
POLICY_CENTRAL = int(Policy.CENTRAL_QUEUE)
"""``policy`` codes: how a replica's arrival SCV follows from the fleet's (``fleet``'s doc)."""

SLOT_LIMITED_SATURATION = 1.0
"""``fleet.SLOT_LIMITED_SATURATION``, copied (``fleet`` imports this module, not the reverse;
``test_fleet_kernel.py`` checks that the two agree)."""


@compile_kernel
def _minimum(a: float, b: float) -> float:
    """``np.minimum`` of two floats: ``nan`` if either is."""
    return a if a < b or a != a else b


@compile_kernel
def _maximum(a: float, b: float) -> float:
    """``np.maximum`` of two floats: ``nan`` if either is."""
    return a if a > b or a != a else b


@compile_kernel
def _class_sums(values: np.ndarray) -> np.ndarray:
    """``values.sum(axis=1)`` of cells x classes, in numpy's order (``_tail_kernel.row_sum``:
    left to right below 8 terms)."""
    cells, classes = values.shape
    out = np.empty(cells)
    for i in range(cells):
        if classes < 8:
            total = 0.0
            for j in range(classes):
                total += values[i, j]
            out[i] = total
        else:
            out[i] = row_sum(values[i])
    return out


@compile_kernel
def saturation_hold_cells(
    x: np.ndarray,
    c: np.ndarray,
    rates: np.ndarray,
    count: np.ndarray,
    s: float,
    f: float,
    size_cap: float,
    steps: int,
) -> np.ndarray:
    """The holding time ``T`` (ms) at which one replica's slots just keep up, per cell.

    A batch is its first request plus the ``x_j T`` that arrive while it is held, so a model
    sends ``x_j / (1 + x_j T)`` batches per ms (at least ``x_j / B``): a rare model still sends
    single requests however long the others wait. ``T`` solves
    ``x s (1 - f) + s f sum_j n_j max(x_j / B, x_j / (1 + x_j T)) = c``; with one model that is
    ``1 + x T = x s f / (c - x s (1 - f))``, the batch size at which slots keep up. Where single
    requests alone fit in the slots (``x s <= c``) that closed form is used (``T <= 0``: no
    holding needed); else ``steps`` of bisection on a log scale between 1e-9 and 1e9 ms.
    ``inf`` where even full batches cannot keep up.

    ``x``, ``c``: rate and slots per cell; ``rates``: cells x classes (one model's rate);
    ``count``: models per class. The bisection steps every busy cell once per round, as numpy
    did: the cells' steps are independent, so the processor overlaps them (one cell at a time,
    each step waits on the last one's square root and divisions).
    """
    cells, classes = rates.shape
    hold = np.empty(cells)
    busy = np.empty(cells, dtype=np.int64)
    found = 0
    for i in range(cells):
        room = c[i] - x[i] * s * (1.0 - f)
        hold[i] = s * f / room - 1.0 / x[i] if room > 0.0 else np.inf
        if x[i] * s > c[i] and x[i] * s * (f / size_cap + 1.0 - f) < c[i]:
            busy[found] = i
            found += 1
    if found == 0:
        return hold
    overhead = s * f
    lo = np.zeros(found)
    hi = np.full(found, 1e9)
    terms = np.empty(classes)
    for _ in range(steps):
        for k in range(found):
            i = busy[k]
            mid = math.sqrt(_maximum(lo[k], 1e-9) * hi[k])  # bisection on a log scale
            if classes == 1:  # numpy's sum of one term is that term
                rate = rates[i, 0]
                load = count[0] * _maximum(rate / size_cap, rate / (1.0 + rate * mid))
            else:
                for j in range(classes):
                    rate = rates[i, j]
                    terms[j] = count[j] * _maximum(rate / size_cap, rate / (1.0 + rate * mid))
                load = row_sum(terms)
            if x[i] * s * (1.0 - f) + overhead * load - c[i] > 0.0:
                lo[k] = mid
            else:
                hi[k] = mid
    for k in range(found):
        hold[busy[k]] = math.sqrt(_maximum(lo[k], 1e-9) * hi[k])
    return hold


@compile_kernel
def _rows(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    d: np.ndarray,
    e: np.ndarray,
    f: np.ndarray,
    g: np.ndarray,
) -> np.ndarray:
    """The seven arrays of a ``FleetLatency`` as the rows of one."""
    out = np.empty((7, a.size))
    for row, values in enumerate((a, b, c, d, e, f, g)):
        out[row] = values
    return out


@compile_kernel
def replica_cells(
    rate: np.ndarray, replicas: np.ndarray, policy: int, fleet_scv: float, slots_per_replica: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``fleet._replica_view`` and ``fleet.arrival_shape`` per cell: one replica's rate (per ms),
    its slots and the Gamma shape ``k`` of its arrivals, from the fleet's rate and replicas."""
    cells = rate.size
    x = np.empty(cells)
    c = np.empty(cells)
    shape = np.empty(cells)
    for i in range(cells):
        if policy == POLICY_CENTRAL:
            x[i] = rate[i]
            c[i] = replicas[i] * slots_per_replica
            shape[i] = 1.0 / fleet_scv
        else:
            x[i] = rate[i] / replicas[i]
            c[i] = slots_per_replica
            if policy == POLICY_ROUND_ROBIN:
                shape[i] = 1.0 / (fleet_scv / replicas[i])
            else:
                shape[i] = 1.0 / (1.0 + (fleet_scv - 1.0) / replicas[i])
    return x, c, shape


@compile_kernel
def unbatched_quantile_cells(
    rate: np.ndarray,
    replicas: np.ndarray,
    policy: int,
    fleet_scv: float,
    slots_per_replica: float,
    single_request_ms: float,
    tails: np.ndarray,
    mdc_servers: np.ndarray,
    mdc_load: np.ndarray,
    mdc_log_tail: np.ndarray,
) -> np.ndarray:
    """``fleet.unbatched_quantile`` over 1-d arrays of cells; arguments as for
    ``batched_quantile_cells``. Returns ``FleetLatency``'s seven fields as rows, in order."""
    log_tail = tails[1]
    s = single_request_ms
    cells = rate.size
    x, c, shape = replica_cells(rate, replicas, policy, fleet_scv, slots_per_replica)
    pooled = np.empty(cells)
    rho = np.empty(cells)
    rho_safe = np.empty(cells)
    offered = np.empty(cells)
    for i in range(cells):
        pooled[i] = _maximum(c[i] * shape[i], 1.0)
        rho[i] = x[i] * s / c[i]
        rho_safe[i] = rho[i] if rho[i] < 1.0 else 0.5
        offered[i] = pooled[i] * rho_safe[i]
    # Over every cell at once: decay_rate_cells steps until all have settled, as numpy did.
    eta = decay_rate_cells(pooled, offered)
    log_constant = log_tail_constant_cells(pooled, rho_safe, mdc_servers, mdc_load, mdc_log_tail)
    quantile = np.empty(cells)
    wait = np.empty(cells)
    for i in range(cells):
        log_excess = log_constant[i] - log_tail[i]
        wait[i] = _maximum(0.0, log_excess) / eta[i] * s if rho[i] < 1.0 else np.inf
        quantile[i] = s + wait[i]
    ones = np.ones(cells)
    return _rows(quantile, s * ones, wait, ones, rho, 0.0 * ones, pooled)


@compile_kernel
def batched_quantile_cells(
    rate: np.ndarray,
    replicas: np.ndarray,
    policy: int,
    fleet_scv: float,
    slots_per_replica: float,
    share: np.ndarray,
    count: np.ndarray,
    service: np.ndarray,
    tails: np.ndarray,
    use_table: bool,
    quantile_table: np.ndarray,
    quantile_nodes: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    mdc_servers: np.ndarray,
    mdc_load: np.ndarray,
    mdc_log_tail: np.ndarray,
    newton_steps: int,
    hold_steps: int,
) -> np.ndarray:
    """``fleet.batched_quantile`` over 1-d arrays of cells (fleet rate per ms, replica count).

    ``service``: ``(s, f, B, W)`` (single-request ms, fixed share, batch cap, window ms);
    ``tails``: rows ``tail``, ``log_tail``, ``poisson_fill`` of ``fleet._tails``, per cell;
    ``quantile_table`` and its nodes: ``batching.quantile_from_table``'s (read only where
    ``use_table``); ``mdc_*``: the tail-constant table of ``mdc_grid``. Returns
    ``FleetLatency``'s seven fields as rows, in order (one array: one object to hand back).
    """
    tail, log_tail, poisson_fill = tails[0], tails[1], tails[2]
    s, f, size_cap, window = service[0], service[1], service[2], service[3]
    cells, classes = rate.size, share.size
    x, c, shape = replica_cells(rate, replicas, policy, fleet_scv, slots_per_replica)

    # Step 1: each class's window batch, the holding time, the batch size.
    x_j = np.empty((cells, classes))
    scv_j = np.empty((cells, classes))
    b_window = np.empty((cells, classes))
    for i in range(cells):
        for j in range(classes):
            x_j[i, j] = x[i] * share[j]
            scv_j[i, j] = share[j] / shape[i] + (1.0 - share[j])
            b_window[i, j] = _minimum(size_cap, 1.0 + x_j[i, j] * window)
    hold = saturation_hold_cells(x, c, x_j, count, s, f, size_cap, hold_steps)

    # Step 2: formation plus service per class, and their mixture's quantile.
    weight = np.empty(classes)
    for j in range(classes):
        weight[j] = share[j] * count[j]
    batch = np.empty((cells, classes))
    saturation_j = np.empty((cells, classes))
    tau = np.empty((cells, classes))
    first_share = np.empty((cells, classes))
    mean_s = np.empty((cells, classes))
    sd_s = np.empty((cells, classes))
    weights = np.empty((cells, classes))
    for i in range(cells):
        # ``fill_load`` is a full batch's formation tail for Poisson arrivals; with evenly
        # spaced arrivals it would be ``B - 1 - tail B`` arrivals' worth. In between,
        # interpolate by the CV.
        even_fill = size_cap - 1.0 - tail[i] * size_cap
        for j in range(classes):
            b_saturated = 1.0 + x_j[i, j] * hold[i]
            b = _minimum(size_cap, _maximum(b_window[i, j], b_saturated))
            saturation_j[i, j] = b_saturated / b_window[i, j]
            fill = even_fill + (poisson_fill[i] - even_fill) * math.sqrt(scv_j[i, j])
            fill_ms = _maximum(fill, 0.0) / _maximum(x_j[i, j], 1e-300)
            t = _minimum(window, fill_ms)
            # Where busy slots, not the window, set a model's batch size, its oldest request
            # waits for a slot: the holding time, or until a full batch has gathered if sooner.
            if saturation_j[i, j] >= SLOT_LIMITED_SATURATION:
                t = _maximum(t, _minimum(hold[i], fill_ms))
            spread = 0.0
            if b_window[i, j] < size_cap:
                gap = (size_cap - b_window[i, j]) / 2.5
                spread = _minimum(scv_j[i, j] * x_j[i, j] * window, gap * gap)
            biased = _minimum(size_cap, b + spread / b)
            batch[i, j] = b
            tau[i, j] = t
            first_share[i, j] = 1.0 / b
            mean_s[i, j] = s * (f + (1.0 - f) * biased)
            sd_s[i, j] = _maximum(s * (1.0 - f) * math.sqrt(spread), 1e-3 * s)
            weights[i, j] = weight[j]
    if use_table:  # one class, one tail
        formation_and_service = quantile_from_table_cells(
            tau[:, 0].copy(),
            first_share[:, 0].copy(),
            mean_s[:, 0].copy(),
            sd_s[:, 0].copy(),
            quantile_table,
            quantile_nodes[0],
            quantile_nodes[1],
            quantile_nodes[2],
            quantile_nodes[3],
        )
    else:
        formation_and_service = mixture_quantile_rows(
            tau, first_share, mean_s, sd_s, weights, tail, newton_steps
        )

    # Step 3: the queue of batches for the slots. Short loops over cells, each free of the last
    # one's results (as numpy's array operations were): on a heatmap's grid the processor then
    # overlaps cells instead of waiting on one cell's chain of divisions.
    single = s * (f + (1.0 - f) * 1.0)
    full_batch = s * (f + (1.0 - f) * size_cap)
    batch_rate = np.empty((cells, classes))
    work = np.empty((cells, classes))
    weighted = np.empty((cells, classes))
    for i in range(cells):
        formation_and_service[i] = _maximum(formation_and_service[i], single)
        for j in range(classes):
            batch_rate[i, j] = count[j] * x_j[i, j] / batch[i, j]
            work[i, j] = batch_rate[i, j] * (s * (f + (1.0 - f) * batch[i, j]))
            weighted[i, j] = weight[j] * saturation_j[i, j]
    total_batch_rate = _class_sums(batch_rate)
    mean_service = _class_sums(work)
    saturation = _class_sums(weighted)
    utilization = np.empty(cells)
    queue_load = np.empty(cells)
    for i in range(cells):
        mean_service[i] = mean_service[i] / total_batch_rate[i]
        utilization[i] = total_batch_rate[i] * mean_service[i] / c[i]
        full_batch_load = x[i] * full_batch / (c[i] * size_cap)
        clipped = _minimum(_maximum(saturation[i], 0.0), 1.0)
        queue_load[i] = utilization[i] - (utilization[i] - full_batch_load) * (clipped * clipped)
    # Whitt's QNA hybrid for the merged batch stream's gap SCV.
    streams = np.empty((cells, classes))
    mixed = np.empty((cells, classes))
    for i in range(cells):
        for j in range(classes):
            mix = batch_rate[i, j] / total_batch_rate[i]
            per_stream = mix / count[j]
            streams[i, j] = count[j] * (per_stream * per_stream)
            mixed[i, j] = mix * (scv_j[i, j] / batch[i, j])
            weighted[i, j] = weight[j] * mean_s[i, j]
    stream_sum = _class_sums(streams)
    mixed_sum = _class_sums(mixed)
    mean_s_sum = _class_sums(weighted)
    phases = np.empty(cells)
    pooled = np.empty(cells)
    u_safe = np.empty(cells)
    compute = np.empty(cells)
    offered = np.empty(cells)
    for i in range(cells):
        nu = 1.0 / stream_sum[i]
        u_clip = _minimum(_maximum(queue_load[i], 0.0), 1.0)
        idle = 1.0 - u_clip
        hybrid = 1.0 / (1.0 + 4.0 * (idle * idle) * (nu - 1.0))
        merged_scv = hybrid * mixed_sum[i] + (1.0 - hybrid)
        phases[i] = c[i] * (1.0 / merged_scv)
        pooled[i] = _maximum(c[i] * shape[i], 1.0)
        u_safe[i] = queue_load[i] if queue_load[i] < 1.0 else 0.5
        compute[i] = _minimum(mean_s_sum[i], formation_and_service[i])
        offered[i] = phases[i] * u_safe[i]
    # Over every cell at once: decay_rate_cells steps until all have settled, as numpy did.
    eta = decay_rate_cells(phases, offered)
    log_constant = log_tail_constant_cells(pooled, u_safe, mdc_servers, mdc_load, mdc_log_tail)
    quantile = np.empty(cells)
    queue = np.empty(cells)
    mean_batch = np.empty(cells)
    for i in range(cells):
        log_excess = log_constant[i] - log_tail[i]
        wait = log_excess / (eta[i] / mean_service[i]) if log_excess > 0.0 else 0.0
        queue[i] = wait if queue_load[i] < 1.0 else np.inf
        quantile[i] = formation_and_service[i] + queue[i]
        mean_batch[i] = x[i] / total_batch_rate[i]
    return _rows(quantile, compute, queue, mean_batch, utilization, saturation, pooled)
