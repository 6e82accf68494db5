"""Model-aware routing: each model on the fewest replicas its traffic needs, requests only to them.

Multi-model servers do not send every model to every replica. KServe ModelMesh is a routing
layer that acts as a distributed LRU cache of models across serving pods: a request goes to a
pod that has its model loaded, and copies of a model are loaded or unloaded by how often and how
much it is used. SageMaker multi-model endpoints load models into an instance's memory on
demand and scale each model by its traffic. Triton with explicit model control loads and
unloads models only when asked, so which instances hold which model is up to the router in
front of it. This module is that placement, in steady state:

1. **Holders.** A replica's fair share of the traffic is ``rate / R``. Model ``j`` (rate
   ``lambda_j``) is held by ``n_j = min(R, ceil(lambda_j / (g rate / R)))`` replicas, the fewest
   for which no holder gets more than ``g`` fair shares of it (``g = 1`` unless memory is short,
   below): hot models on many replicas, cold ones on one.
2. **Packing.** Each model's ``n_j`` pieces (rate ``lambda_j / n_j`` each) go, largest first,
   to the replica with the least rate so far that has memory left for the model and does not
   hold it yet (longest-processing-time-first). Balancing by rate: near capacity, where the
   balance decides whether the busiest replica keeps up, batches fill and a replica's slot time
   is its rate times a full batch's time per request; at lighter loads cold models batch less
   and cost more slot time per request, which leaves slot time less even, but the p99 there is
   mostly the window and the service. If a piece finds no replica with room, ``g`` grows by
   ``GROWTH`` (fewer, larger pieces) and the packing starts again; with every model on one
   replica and still no room, the fleet's memory cannot hold the models and the placement is
   infeasible.
3. **Routing.** The balancer sends a request only to a holder of its model, by the workload's
   policy among them: a random holder, the holders in turn (round robin per model), or the
   holder with fewer unfinished requests of two random ones (least request).
4. **Latency.** Each replica is the fleet model's replica (``sdlab_model.queues.fleet``) at its
   own mix: its models' rates ``lambda_j / n_j``, one batcher each, on its slots. Its arrival
   stream's squared CV is the traffic-weighted mean of its models' (Whitt's QNA for superposed
   streams), each model's holder stream being its fleet stream thinned at random
   (``1 + (c_j^2 - 1) / n_j``) or taken in turn (``c_j^2 / n_j``). The fleet's p99 is the ``t``
   at which the replicas' tails, weighted by their traffic, add up to 1%
   (``P(T > t) = sum_r w_r P(T_r > t)``), each tail log-linear between its p98, p99, p99.5
   and p99.9.

Steady state: the traffic is stationary, so the holder sets do not change and every request
finds its model resident (hit ratio 1). A model is loaded only when its holder set grows, which
happens when its traffic grows; those loads are a transient this model leaves out.

Approximations: the window-limited batch size in the packing's slot times; the fleet model's
per-replica approximations (least request as random with batching, as round robin without); a
replica's merged stream taken as a renewal stream of the mean squared CV. ``scripts/
residency_check.py`` measures the p99 against the simulator (``simulate_routed``).

Sources: KServe ModelMesh, README and design charts (https://github.com/kserve/modelmesh);
Amazon SageMaker, "Multi-model endpoints"
(https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-endpoints.html); Triton Inference
Server, "Model Management", model control mode EXPLICIT
(https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/user_guide/model_management.html);
Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math. 17 (1969), for
longest-processing-time-first; Whitt, "The Queueing Network Analyzer", Bell System Technical
Journal 62 (1983).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.latency import Accuracy
from sdlab_model.queues import batching, fleet
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.residency.latency import ResidencyLatency
from sdlab_model.workload import Workload

GROWTH = 1.25
"""Factor by which the largest piece grows when the pieces do not fit in memory."""
MAX_GROWTH_STEPS = 60
"""Packings tried before giving up (``GROWTH ** 60`` is far past one piece per model)."""
TAIL_LEVELS = (0.98, 0.99, 0.995, 0.999)
"""Quantiles computed per replica, the knots of its tail (near the p99: the fleet model's
mixture quantile over a replica's models is steadiest there, while its p95 of a replica with
one hot and a few cold models can land on either side of its p97)."""
_P99 = TAIL_LEVELS.index(0.99)
MIX_TOLERANCE = 0.05
"""Replicas whose rates, squared CVs and hottest shares agree within this share one call."""
_CAPACITY_SLACK = 1e-9


@dataclass(frozen=True, eq=False)
class ModelRouting:
    """Which replicas hold which model, and what each replica then carries.

    ``holders``: per model, the replicas holding it (``holder_replicas[holder_start[j]:
    holder_start[j + 1]]``, ascending). ``replica_rate_rps`` and ``replica_memory_gb`` per
    replica. ``feasible`` False (with ``note``) when the fleet's memory cannot hold every model
    once.
    """

    feasible: bool
    holders_per_model: np.ndarray
    holder_replicas: np.ndarray
    holder_start: np.ndarray
    replica_rate_rps: np.ndarray
    replica_memory_gb: np.ndarray
    note: str

    def holders(self, model: int) -> np.ndarray:
        """The replicas that hold ``model``."""
        return self.holder_replicas[self.holder_start[model] : self.holder_start[model + 1]]


def route_models(workload: Workload, inputs: ResidencyInputs) -> ModelRouting:
    """Place each model on the fewest replicas its traffic needs (see the module docstring)."""
    models, replicas = workload.models_hosted, workload.replicas
    sizes = inputs.sizes_gb(models)
    usable = inputs.usable_memory_gb * (1.0 + _CAPACITY_SLACK)
    rates = workload.rate_rps * workload.model_shares
    fair = workload.rate_rps / replicas
    if sizes.max() > usable:
        return _no_routing(
            models, replicas, f"a {sizes.max():.3g} GB model does not fit in {usable:.3g} GB"
        )
    growth = 1.0
    for _ in range(MAX_GROWTH_STEPS):
        counts = np.clip(np.ceil(rates / (growth * fair) - 1e-9), 1, replicas).astype(np.int64)
        # Pieces that need more memory than the fleet has cannot be packed: skip the attempt.
        fits = float(np.sum(counts * sizes)) <= replicas * usable
        packed = _pack(workload, sizes, usable, rates, counts) if fits else None
        if packed is not None:
            return packed
        if counts.max() == 1:
            break
        growth *= GROWTH
    total_gb = float(sizes.sum())
    fleet_text = (
        f"{replicas:,} replica{'s' if replicas != 1 else ''} of {inputs.usable_memory_gb:g} GB"
    )
    why = (
        f"{fleet_text} cannot hold the {models:,} models ({total_gb:,.3g} GB) once each"
        if total_gb > replicas * usable
        else f"the {models:,} models' sizes ({total_gb:,.3g} GB) leave no packing of each once "
        f"on {fleet_text}"
    )
    return _no_routing(models, replicas, why)


def _pack(
    workload: Workload, sizes: np.ndarray, usable: float, rates: np.ndarray, counts: np.ndarray
) -> ModelRouting | None:
    """Longest-processing-time-first packing of every model's pieces; ``None`` if one does not
    fit anywhere it may go."""
    replicas, models = workload.replicas, workload.models_hosted
    piece_rate = rates / counts
    load = [0.0] * replicas
    memory = [0.0] * replicas
    held_by: list[list[int]] = [[] for _ in range(models)]
    emptiest = [(0.0, replica) for replica in range(replicas)]  # (rate, replica) heap
    smallest = float(sizes.min())
    # Pieces by rate, largest first (the model index breaks ties, so runs repeat). A model's
    # pieces take the least-loaded replicas with room, one piece each.
    for model in np.lexsort((np.arange(models), -piece_rate)).tolist():
        size, skipped = float(sizes[model]), []
        while len(held_by[model]) < counts[model]:
            if not emptiest:
                return None
            entry = heapq.heappop(emptiest)
            if memory[entry[1]] + size <= usable:
                held_by[model].append(entry[1])
            else:
                skipped.append(entry)
        for replica in held_by[model]:
            load[replica] += float(piece_rate[model])
            memory[replica] += size
            heapq.heappush(emptiest, (load[replica], replica))
        for entry in skipped:  # a replica without room for even the smallest model is full
            if memory[entry[1]] + smallest <= usable:
                heapq.heappush(emptiest, entry)
    holder_replicas = np.concatenate([np.sort(held) for held in held_by])
    return ModelRouting(
        feasible=True,
        holders_per_model=counts,
        holder_replicas=holder_replicas.astype(np.int64),
        holder_start=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
        replica_rate_rps=np.array(load),
        replica_memory_gb=np.array(memory),
        note="",
    )


def _no_routing(models: int, replicas: int, why: str) -> ModelRouting:
    return ModelRouting(
        feasible=False,
        holders_per_model=np.zeros(models, dtype=np.int64),
        holder_replicas=np.zeros(0, dtype=np.int64),
        holder_start=np.zeros(models + 1, dtype=np.int64),
        replica_rate_rps=np.zeros(replicas),
        replica_memory_gb=np.zeros(replicas),
        note=f"Model-aware routing is infeasible: {why}.",
    )


@dataclass(frozen=True)
class ReplicaTails:
    """One group of replicas with the same mix: its traffic weight and latency quantiles (ms) at
    ``TAIL_LEVELS``, its slots' busy share, its batch-queue share of the p99 and its saturation
    (``fleet``'s)."""

    weight: float
    quantiles_ms: tuple[float, ...]
    utilization: float
    queue_share: float
    saturation: float
    pooled_servers: float


def routed_latency(
    workload: Workload, inputs: ResidencyInputs, routing: ModelRouting | None = None
) -> ResidencyLatency:
    """p99 of the fleet under model-aware routing (see the module docstring for the model).

    ``routing`` is ``route_models(workload, inputs)`` (computed here when not given).
    """
    routing = route_models(workload, inputs) if routing is None else routing
    busiest = int(np.max(routing.holders_per_model)) if routing.feasible else 0
    common = dict(
        hit_ratio=1.0,
        request_hit_ratio=1.0,
        load_wait_share=0.0,
        load_ms=0.0,
        loads_per_s=0.0,
        p99_is_load_time=False,
        pinned_models=0,
        models_resident_max=int(_models_per_replica(routing).max()) if routing.feasible else 0,
    )
    if not routing.feasible:
        return ResidencyLatency(
            p99_ms=math.inf,
            utilization=math.inf,
            is_stable=False,
            accuracy="exact",
            note=routing.note + " No p99.",
            **{**common, "hit_ratio": 0.0, "request_hit_ratio": 0.0, "load_wait_share": 1.0},
        )
    capacity = _replica_capacity_load(workload, routing)
    if capacity >= 1.0:
        return ResidencyLatency(
            p99_ms=math.inf,
            utilization=capacity,
            is_stable=False,
            accuracy="exact",
            note=(
                f"The busiest replica would need {capacity:.0%} of its slots even on full "
                "batches: the queue grows without bound."
            ),
            **common,
        )
    groups = replica_tails(workload, routing)
    p99 = mixture_quantile(groups, 0.99)
    accuracy, why = _accuracy(workload, groups)
    busy = [g.utilization for g in groups]
    note = (
        f"Each request goes to a replica holding its model: the hottest model on {busiest:,} "
        f"replicas, {int(np.count_nonzero(routing.holders_per_model == 1)):,} models on one; "
        f"the replicas' slots are {min(busy):.0%} to {max(busy):.0%} busy. In steady state no "
        "request waits for a load." + why
    )
    return ResidencyLatency(
        p99_ms=p99,
        utilization=max(busy),
        is_stable=math.isfinite(p99),
        accuracy=accuracy,
        note=note,
        **common,
    )


def _models_per_replica(routing: ModelRouting) -> np.ndarray:
    return np.bincount(routing.holder_replicas, minlength=routing.replica_rate_rps.size)


def _replica_capacity_load(workload: Workload, routing: ModelRouting) -> float:
    """The busiest replica's slot load were every batch full: at or past 1 it cannot keep up."""
    full = workload.effective_max_batch_size
    per_request_ms = workload.batch_service_ms(full) / full
    return (
        float(routing.replica_rate_rps.max())
        / 1000.0
        * per_request_ms
        / (workload.slots_per_replica)
    )


def replica_tails(workload: Workload, routing: ModelRouting) -> tuple[ReplicaTails, ...]:
    """Each distinct replica mix's quantiles from the fleet model at that mix.

    A replica holding models at per-holder rates ``x_m`` (per ms) is the fleet model's replica
    at rate ``X = sum x_m`` with one class per model (share ``x_m / X``). Its arrival stream's
    squared CV ``a2`` (module docstring, step 4) is handed to the fleet model as a round-robin
    split of a Poisson stream over ``1 / a2`` replicas (whose ``a2`` is exactly that), or, where
    ``a2 > 1``, as one replica of a stream with that CV. Replicas with as many models whose
    total rate, mean ``a2`` and hottest model's share agree within ``MIX_TOLERANCE`` share one
    call (the first one's mix stands for them all).
    """
    shares = workload.model_shares
    fleet_scv = workload.arrival_cv**2
    model_scv = shares * fleet_scv + 1.0 - shares
    counts = routing.holders_per_model.astype(float)
    if _holder_policy(workload) == "round_robin":
        holder_scv = model_scv / counts
    else:
        holder_scv = 1.0 + (model_scv - 1.0) / counts
    per_holder = workload.rate_rps * shares / counts / 1000.0
    model_of_piece = np.repeat(np.arange(shares.size), routing.holders_per_model)
    by_replica = np.argsort(routing.holder_replicas, kind="stable")
    bounds = np.searchsorted(
        routing.holder_replicas[by_replica], np.arange(routing.replica_rate_rps.size + 1)
    ).tolist()
    pieces = model_of_piece[by_replica].tolist()
    rate_of, scv_of = per_holder.tolist(), holder_scv.tolist()
    step = math.log1p(MIX_TOLERANCE)
    batched = workload.effective_max_batch_size > 1
    mixes: dict[tuple, list] = {}
    for replica in range(routing.replica_rate_rps.size):
        held = pieces[bounds[replica] : bounds[replica + 1]]
        if not held:  # an idle replica: no traffic, no tail
            continue
        total_rate = sum(rate_of[m] for m in held)
        mean_scv = sum(rate_of[m] * scv_of[m] for m in held) / total_rate
        key: tuple = (round(math.log(total_rate) / step), round(math.log(mean_scv) / step))
        if batched:  # one batcher per model: the mix matters too
            hottest = max(rate_of[m] for m in held) / total_rate
            key += (round(math.log(hottest) / step), len(held))
        if key in mixes:
            mixes[key][0] += total_rate
        else:
            mixes[key] = [total_rate, np.array(held)]
    total = sum(weight for weight, _ in mixes.values())
    levels = np.array(TAIL_LEVELS)
    groups = []
    plain = workload.with_changes(lb_policy="round_robin", arrival_cv=1.0)
    for rate_sum, members in mixes.values():
        held = members[np.lexsort((members, -per_holder[members]))]  # one order: hottest first
        rates, scvs = per_holder[held], holder_scv[held]
        rate = float(rates.sum())
        scv = float(np.sum(rates * scvs) / rate)
        spread = 1.0 / scv if scv <= 1.0 else 1.0
        shaped = plain if scv <= 1.0 else plain.with_changes(arrival_cv=math.sqrt(scv))
        cells = np.full(levels.size, rate * spread)
        replicas = np.full(levels.size, spread)
        if workload.effective_max_batch_size == 1:
            parts = fleet.unbatched_quantile(shaped, cells, replicas, levels)
        else:
            classes = fleet.ModelClasses(rates / rate, np.ones(rates.size))
            parts = fleet.batched_quantile(shaped, cells, replicas, levels, classes)
        p99 = float(parts.quantile_ms[_P99])
        groups.append(
            ReplicaTails(
                weight=rate_sum / total,
                quantiles_ms=tuple(float(v) for v in parts.quantile_ms),
                utilization=float(parts.utilization[_P99]),
                queue_share=float(parts.queue_ms[_P99]) / p99 if p99 > 0 else 0.0,
                saturation=float(parts.saturation[_P99]),
                pooled_servers=float(parts.pooled_servers[_P99]),
            )
        )
    return tuple(groups)


def _holder_policy(workload: Workload) -> str:
    """How a replica's arrivals follow from its models' holders, as ``fleet`` models each
    policy: least request like random with batching and like round robin without."""
    if workload.lb_policy == "least_request":
        return "random" if workload.dynamic_batching else "round_robin"
    return workload.lb_policy


def mixture_quantile(groups: tuple[ReplicaTails, ...], q: float) -> float:
    """The ``q`` quantile of the fleet: ``t`` with ``sum_r w_r P(T_r > t) = 1 - q``.

    Each replica's tail is log-linear in ``t`` between its quantiles at ``TAIL_LEVELS``, and
    along its first and last segments' lines beyond them (at most 1). The mixture's quantile
    lies between the replicas' own, so bisection between them finds it.
    """
    level = TAIL_LEVELS.index(q)
    times = np.array([g.quantiles_ms for g in groups])
    if not np.all(np.isfinite(times[:, level])):
        return math.inf
    weights = np.array([g.weight for g in groups])
    log_tails = np.log1p(-np.array(TAIL_LEVELS))
    target = math.log1p(-q)

    knots = np.maximum.accumulate(times, axis=1)
    # Strictly increasing knots (equal quantiles are an atom); an infinite one keeps its tail flat.
    knots = knots * (1.0 + 1e-9 * np.arange(knots.shape[1])) + 1e-9 * np.arange(knots.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.nan_to_num(np.diff(log_tails) / np.diff(knots, axis=1), nan=0.0)
    rows = np.arange(knots.shape[0])

    def tail(t: float) -> float:
        # Each replica's segment holding t (the first and last extended past their ends).
        segment = np.clip(np.sum(knots <= t, axis=1) - 1, 0, slopes.shape[1] - 1)
        value = log_tails[segment] + slopes[rows, segment] * (t - knots[rows, segment])
        return float(np.sum(weights * np.exp(np.minimum(value, 0.0))))

    low, high = float(times[:, level].min()), float(times[:, level].max())
    for _ in range(60):
        if high - low <= 1e-9 * max(high, 1.0):
            break
        middle = 0.5 * (low + high)
        if tail(middle) > math.exp(target):
            low = middle
        else:
            high = middle
    return high


def _accuracy(workload: Workload, groups: tuple[ReplicaTails, ...]) -> tuple[Accuracy, str]:
    """``approximate`` (with why) outside the regime the check validated, else ``validated``."""
    if workload.lb_policy == "least_request":
        return "approximate", " Least request among holders is modelled like the fleet's."
    if workload.arrival_cv != 1.0:
        return "approximate", " Non-Poisson arrivals: outside the range checked."
    if workload.effective_max_batch_size == 1:
        if min(g.pooled_servers for g in groups) < fleet.MIN_VALIDATED_POOLED_SERVERS:
            return "approximate", " Few pooled servers per replica: outside the range checked."
        return "validated", ""
    if workload.slots_per_replica < batching.MIN_ACCURATE_SERVERS:
        return "approximate", " Too few slots per replica for the batching model."
    # The fleet model's own limits for a replica of several models (``fleet.accuracy``).
    limit = min(batching.saturation_limit(workload.batch_overhead_share), batching.SATURATION_LIMIT)
    if any(g.queue_share >= fleet.MAX_VALIDATED_QUEUE_SHARE for g in groups):
        return (
            "approximate",
            " On some replicas the wait for a free slot is a large part of the p99.",
        )
    if any(g.saturation >= limit for g in groups):
        return "approximate", " On some replicas busy slots, not the window, set the batch sizes."
    return "validated", ""
