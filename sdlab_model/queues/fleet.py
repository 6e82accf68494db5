"""The fleet as deployed: a load balancer in front of replicas that each batch per model.

Every policy but ``central_queue`` is modelled one replica at a time. A replica sees the fleet's
rate divided by ``R`` replicas; what the balancer changes is how *regular* that stream is, which
is summed up as the squared coefficient of variation of its gaps, ``a2``, or its *shape*
``k = 1 / a2`` (a Gamma renewal stream of shape ``k``):

- ``random`` thins the fleet's stream: ``a2 = 1 + (ca^2 - 1) / R`` (a Poisson stream stays
  Poisson, so a replica is exactly one queue at ``lambda / R``);
- ``round_robin`` gives each replica every R-th arrival: ``a2 = ca^2 / R`` (for Poisson arrivals
  an Erlang-R stream, which makes the replicas together behave like one pooled queue);
- ``least_request`` (power of two choices on unfinished requests) is modelled as ``random``
  with batching (a replica that just dispatched a batch looks idle and draws the next requests,
  so batches do not pool) and as ``round_robin`` without it; both are flagged where simulation
  showed them off.

Inside a replica each model ``m`` (share ``p_m``) has its own batcher fed by a thinned stream
(``a2_m = p_m a2 + 1 - p_m``). Batch formation and service follow ``sdlab_model.queues.batching``
per model; the replica's slots then serve the merged stream of every model's batches. The
queue for a slot uses the fact that a GI/D/c queue with Gamma-``k`` arrivals has the waiting
time of an M/D/(k c) queue at ``k`` times the rate when ``k`` is whole (each slot of a FCFS
deterministic queue sees every c-th arrival, as in M/D/c's cyclic view), and interpolates
between whole ``k``: the tail decay rate solves ``eta D = k c ln(1 + eta / (k lambda))``, and
the tail constant is the M/D/c one at ``(k c, rho)``.

Sources: Triton's dynamic batcher (one scheduler per model, ``max_queue_delay_microseconds``);
Envoy's load-balancer docs (round robin, least request with two choices); Kubernetes
kube-proxy (random backend in iptables mode); Whitt, "The Queueing Network Analyzer", Bell
System Technical Journal 62 (1983), for superposed streams; Tijms, *A First Course in Stochastic
Models* (2003) §9.4 for the E_k/D/c decay rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sdlab_model.policies import Policy
from sdlab_model.queues import batching, kernels, mdc_grid
from sdlab_model.workload import Workload

MAX_VALIDATED_REPLICA_SCV = 1.05
"""Above this squared CV of a replica's arrival gaps the model is flagged approximate."""

MIN_VALIDATED_POOLED_SERVERS = 4.0
"""Below this (fractional) pooled server count the unbatched tail is flagged approximate."""

MAX_VALIDATED_QUEUE_SHARE = 0.1
"""With batching, a slot queue above this share of the p99 is flagged approximate (no cell of
the tuning grid in that regime was validated; seed 4's test grid found one 16% high there)."""

SLOT_LIMITED_SATURATION = 1.0
"""From this ``b_sat / b_w`` on, slots, not the window, set a model's batch (and its wait)."""

MAX_MODEL_CLASSES = 12
"""Models with similar traffic shares are grouped into at most this many classes."""


@dataclass(frozen=True)
class ModelClasses:
    """Hosted models grouped by traffic share: ``count[j]`` models of share ``share[j]`` each."""

    share: np.ndarray
    count: np.ndarray

    @property
    def weight(self) -> np.ndarray:
        """Traffic share of each class, all its models together."""
        return self.share * self.count


def model_classes(workload: Workload) -> ModelClasses:
    """The hosted models as at most ``MAX_MODEL_CLASSES`` classes of equal share.

    Exact (one class per distinct share) when there are few models or an even split; otherwise
    models are grouped by share on a log scale, each group represented by its mean share (the
    group's traffic is kept exactly). Kept per (models, skew), read-only: one evaluate asks for
    the same classes a few times.
    """
    return _model_classes(workload.models_hosted, workload.popularity_skew)


@lru_cache(maxsize=64)
def _model_classes(models_hosted: int, popularity_skew: float) -> ModelClasses:
    classes = _grouped_classes(
        Workload(models_hosted=models_hosted, popularity_skew=popularity_skew)
    )
    classes.share.setflags(write=False)
    classes.count.setflags(write=False)
    return classes


def _grouped_classes(workload: Workload) -> ModelClasses:
    shares = workload.model_shares
    distinct, counts = np.unique(np.round(shares, 15), return_counts=True)
    if distinct.size <= MAX_MODEL_CLASSES:
        return ModelClasses(distinct.astype(float), counts.astype(float))
    edges = np.linspace(np.log(shares.min()), np.log(shares.max()), MAX_MODEL_CLASSES + 1)
    group = np.clip(
        np.searchsorted(edges, np.log(shares), side="right") - 1, 0, MAX_MODEL_CLASSES - 1
    )
    count = np.bincount(group, minlength=MAX_MODEL_CLASSES).astype(float)
    weight = np.bincount(group, weights=shares, minlength=MAX_MODEL_CLASSES)
    keep = count > 0
    return ModelClasses(weight[keep] / count[keep], count[keep])


def replica_arrival_scv(policy: str, replicas: np.ndarray, arrival_cv: float) -> np.ndarray:
    """Squared CV ``a2`` of the gaps between arrivals at one replica, by balancer policy."""
    fleet_scv = arrival_cv * arrival_cv
    r = np.asarray(replicas, dtype=float)
    if policy == "round_robin":
        return fleet_scv / r
    if policy == "central_queue":
        return np.full(r.shape, fleet_scv)
    return 1.0 + (fleet_scv - 1.0) / r


def _replica_view(workload: Workload, rate_per_ms, replicas):
    """Per-replica rate (per ms), replica count and slots per replica, as arrays.

    ``central_queue`` is one queue over every slot of the fleet: a single "replica" with
    ``servers`` slots at the fleet's rate.
    """
    lam, r = np.broadcast_arrays(np.asarray(rate_per_ms, float), np.asarray(replicas, float))
    if workload.is_central_queue:
        return lam, np.ones(lam.shape), r * workload.slots_per_replica
    return lam / r, r, np.full(lam.shape, float(workload.slots_per_replica))


def arrival_shape(workload: Workload, replicas: np.ndarray) -> np.ndarray:
    """Gamma shape ``k = 1 / a2`` of the arrivals one replica's slot queue sees.

    ``central_queue``: the fleet's own stream, ``1 / arrival_cv**2``; least request: see the
    module doc.
    """
    return 1.0 / replica_arrival_scv(_replica_policy(workload), replicas, workload.arrival_cv)


@dataclass(frozen=True)
class FleetLatency:
    """Arrays (one entry per cell) of one replica's latency quantile and its parts, in ms."""

    quantile_ms: np.ndarray
    compute_ms: np.ndarray
    queue_ms: np.ndarray
    mean_batch_size: np.ndarray
    utilization: np.ndarray
    saturation: np.ndarray
    pooled_servers: np.ndarray


def unbatched_quantile(
    workload: Workload, rate_per_ms: np.ndarray, replicas: np.ndarray, q: float | np.ndarray
) -> FleetLatency:
    """Without batching: one replica is a GI/D/c queue, taken as M/D/(k c) at ``k`` x the rate.

    The p99 wait comes from the tabulated exact M/D/c tail (``sdlab_model.queues.mdc_grid``) at
    ``k c`` servers (fractional ``k c`` interpolates between whole ones). ``q``: one quantile,
    or one per cell (see ``_tails``). A compiled loop over cells
    (``_fleet_kernel.unbatched_quantile_cells``).
    """
    unbatched_quantile_cells = kernels.module(kernels.FLEET).unbatched_quantile_cells
    rate, count = np.broadcast_arrays(np.asarray(rate_per_ms, float), np.asarray(replicas, float))
    parts = unbatched_quantile_cells(
        *_replica_arguments(workload, rate, count),
        float(workload.single_request_ms),
        _tail_rows(_tails(q, rate.shape), rate.size),
        *mdc_grid.KERNEL_TABLE,
    )
    return FleetLatency(*(part.reshape(rate.shape) for part in parts))


def batched_quantile(
    workload: Workload,
    rate_per_ms: np.ndarray,
    replicas: np.ndarray,
    q: float | np.ndarray,
    classes: ModelClasses | None = None,
    use_table: bool = False,
) -> FleetLatency:
    """With batching: per-model formation and service, then a queue of batches for the slots.

    ``use_table`` (for grids): with one model class, step 2's quantile comes from the
    precomputed standard table (``batching.quantile_from_table``, within 1% at the p99)
    instead of a Newton solve per cell. ``q``: one quantile, or one per cell (``_tails``).

    Steps, per replica (rate ``x = lambda / R``, ``c`` slots, model class ``j`` with one model's
    share ``p_j`` and ``n_j`` models; ``s``, ``f``, ``B``, ``W`` as in
    ``sdlab_model.queues.batching``):

    1. Each model's batcher sees ``x_j = x p_j`` with gap SCV ``a2_j = p_j a2 + 1 - p_j``. Its
       window collects ``b_w = min(B, 1 + x_j W)``. Busy slots hold every model's batch until a
       slot frees; if every model's batch is held ``T``, a batch is its first request plus
       ``x_j T`` more, and the slots just keep up at the ``T`` of
       ``_fleet_kernel.saturation_hold_cells``, so batches grow to
       ``b_j = min(B, max(b_w, 1 + x_j T))``.
    2. Formation plus service ``F_j + S_j`` as in ``batching`` (the batch-count variance is the
       window's arrivals times ``a2_j``; where slots set the batch size, ``b_sat >= b_w``, the
       oldest request waits the holding time ``T`` instead of the window), and the ``q``
       quantile of their mixture over models (weights: traffic shares).
    3. The slots serve the merged batch stream: its gap SCV by Whitt's QNA hybrid for
       superposed streams (each model's batch gaps have SCV ``a2_j / b_j``), shape
       ``k_B = 1 / SCV``; the wait tail ``C e^(-eta t)`` with ``eta D = k_B c ln(1 + eta/(k_B
       Lambda))`` (``Lambda`` the batch rate, ``D`` the mean batch service) and ``C`` the M/D/c
       constant at ``(k c, u)``. Its ``q`` quantile is added to step 2's.

    Approximations: those of ``sdlab_model.queues.batching`` plus the mixture of batch sizes served
    as their mean. ``scripts/accuracy_report.py`` measures where this holds.

    A compiled loop over cells and classes (``_fleet_kernel.batched_quantile_cells``), the numpy
    version's arithmetic in its order.
    """
    batched_quantile_cells = kernels.module(kernels.FLEET).batched_quantile_cells
    if workload.is_central_queue:  # one batcher for every model
        classes = ModelClasses(np.ones(1), np.ones(1))
    else:
        classes = classes or model_classes(workload)
    rate, count = np.broadcast_arrays(np.asarray(rate_per_ms, float), np.asarray(replicas, float))
    cell_shape = rate.shape
    size_cap = float(workload.effective_max_batch_size)
    tails = _tails(q, cell_shape, int(size_cap))
    use_table = use_table and classes.share.size == 1 and np.ndim(tails.tail) == 0
    quantile_table = batching.standard_quantile_table(float(tails.tail)) if use_table else _NO_TABLE
    service = np.array(
        [
            workload.single_request_ms,
            workload.batch_overhead_share,
            size_cap,
            float(workload.batch_window_ms),
        ]
    )
    # Fresh arrays throughout: a read-only or strided view would compile the kernel once more.
    parts = batched_quantile_cells(
        *_replica_arguments(workload, rate, count),
        np.array(classes.share, dtype=float),
        np.array(classes.count, dtype=float),
        service,
        _tail_rows(tails, rate.size),
        use_table,
        quantile_table,
        batching.QUANTILE_TABLE_NODES,
        *mdc_grid.KERNEL_TABLE,
        2 * batching.NEWTON_STEPS,
        _HOLD_BISECTION_STEPS,
    )
    return FleetLatency(*(part.reshape(cell_shape) for part in parts))


_NO_TABLE = np.zeros((2, 2))
"""``batched_quantile``'s stand-in for the quantile table where it is not used (one type)."""

_HOLD_BISECTION_STEPS = 32
"""Steps of the holding time's bisection on a log scale, 1e-9 to 1e9 ms
(``_fleet_kernel.saturation_hold_cells``)."""


def _replica_arguments(workload: Workload, rate: np.ndarray, count: np.ndarray) -> tuple:
    """The kernels' first arguments: the cells' fleet rates and replica counts (fresh 1-d
    arrays), the policy's code, the fleet's arrival SCV and the slots per replica."""
    return (
        np.array(rate, dtype=float, order="C").ravel(),
        np.array(count, dtype=float, order="C").ravel(),
        int(Policy.of(_replica_policy(workload))),
        float(workload.arrival_cv * workload.arrival_cv),
        float(workload.slots_per_replica),
    )


def _tail_rows(tails: _Tails, cells: int) -> np.ndarray:
    """``tail``, ``log_tail`` and ``poisson_fill`` as three rows of one value per cell."""
    rows = np.empty((3, cells))
    for row, values in zip(rows, (tails.tail, tails.log_tail, tails.poisson_fill), strict=True):
        row[:] = values.ravel() if isinstance(values, np.ndarray) else values  # one, or per cell
    return rows


def _replica_policy(workload: Workload) -> str:
    """The policy whose arrival SCV a replica sees (least request: see the module doc)."""
    policy = workload.lb_policy
    if policy == "least_request":
        policy = "random" if workload.dynamic_batching else "round_robin"
    return policy


@dataclass(frozen=True)
class _Tails:
    """``1 - q``, ``log(1 - q)`` and a full batch's Poisson formation load at that tail."""

    tail: float | np.ndarray
    log_tail: float | np.ndarray
    poisson_fill: float | np.ndarray


def _tails(q: float | np.ndarray, cell_shape: tuple[int, ...], size: int = 1) -> _Tails:
    """The tail terms for one quantile (floats), or for one quantile per cell.

    Per cell (``q`` shaped like the cells) ``tail`` and ``poisson_fill`` are a column (cells x 1,
    against the classes axis) and ``log_tail`` a row of cells. Each value is computed exactly as
    for one quantile (``math.log``, ``batching.fill_load``), so a cell's result is bit for bit
    the one-quantile call's: a point's p50, p95 and p99 then cost one call, not three.
    """
    if np.ndim(q) == 0:
        tail = 1.0 - q
        return _Tails(tail, math.log(tail), batching.fill_load(size, tail))
    return _cell_tails(tuple(np.broadcast_to(q, cell_shape).ravel().tolist()), cell_shape, size)


@lru_cache(maxsize=64)
def _cell_tails(quantiles: tuple[float, ...], cell_shape: tuple[int, ...], size: int) -> _Tails:
    """``_tails`` per cell, kept (read-only): a point's three quantiles are asked for on every
    evaluation."""
    tails = [1.0 - value for value in quantiles]
    fills = [batching.fill_load(size, tail) for tail in tails]
    rows = (
        np.array(tails)[:, None],
        np.array([math.log(tail) for tail in tails]).reshape(cell_shape),
        np.array(fills)[:, None],
    )
    for row in rows:
        row.setflags(write=False)
    return _Tails(*rows)


def accuracy(workload: Workload, parts: FleetLatency, is_exact: bool) -> tuple[str, str]:
    """``(accuracy, note)`` for one workload's fleet latency: where simulation backs it.

    The limits were set on the tuning grid of ``scripts/fleet_accuracy.py`` and are reported on
    its independent test grid.
    """
    if is_exact:
        return "exact", (
            "Exact: without batching each replica is an M/D/c queue, or (round robin, Erlang "
            "arrivals) the replicas together wait exactly like one pooled M/D/c queue."
        )
    if workload.lb_policy == "least_request":
        return "approximate", (
            "Least request has no closed form here (replicas that look idle draw the next "
            "requests); it is approximated by random (with batching) or round robin (without), "
            "so check it against simulation."
        )
    replicas = np.array(float(workload.replicas))
    scv = 1.0 / float(arrival_shape(workload, replicas))
    if scv > MAX_VALIDATED_REPLICA_SCV:
        return "approximate", (
            f"Each replica's arrivals are bursty (squared CV of the gaps {scv:.2g}); the "
            "Gamma-arrival queue is outside its accuracy target there."
        )
    if workload.effective_max_batch_size == 1:
        if float(parts.pooled_servers) < MIN_VALIDATED_POOLED_SERVERS:
            return "approximate", (
                f"The queue is taken as {float(parts.pooled_servers):.2g} pooled servers, between "
                "small queues whose tails differ a lot; check it against simulation."
            )
        return "validated", "Near-Poisson arrivals at each replica: within 5% of simulation here."
    if workload.arrival_cv != 1.0:
        return "approximate", (
            f"Arrivals with CV {workload.arrival_cv:g} change how batches fill in ways the "
            "batching model does not follow closely; check it against simulation."
        )
    _, _, slots = _replica_view(workload, np.array(1.0), replicas)
    if float(slots) < batching.MIN_ACCURATE_SERVERS:
        return "approximate", (
            f"With {float(slots):.0f} slot(s) per replica a busy slot delays whole batches; the "
            "batching model is outside its 15% target here."
        )
    limit = batching.saturation_limit(workload.batch_overhead_share)
    if workload.models_hosted > 1:
        # Batches of several models take turns on the slots; their sizes differ, which the
        # queue of batches (served at their mean size) follows less well as slots get busy.
        limit = min(limit, batching.SATURATION_LIMIT)
    queue_share = float(parts.queue_ms) / float(parts.quantile_ms)
    if queue_share >= MAX_VALIDATED_QUEUE_SHARE:
        return "approximate", (
            f"Waiting for a free slot is {queue_share:.0%} of the p99 here; the model adds the "
            "queue's p99 to the batch's, which overstates the sum once both matter."
        )
    if float(parts.saturation) >= limit:
        return "approximate", (
            "Batches are slot-limited (busy slots, not the window, set their size): the model "
            "is outside its 15% target here."
        )
    return "validated", (
        "Window-limited batching per replica and model: within 15% of simulation in this regime."
    )
