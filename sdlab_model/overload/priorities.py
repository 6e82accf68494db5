"""Priority classes on one serving queue: strict, non-preemptive priority on ``c`` servers.

Triton's dynamic batcher can keep a priority queue (``priority_levels``,
``default_priority_level``): a free model instance takes the oldest request of the highest level
waiting, and a request in service is never interrupted. Here: classes ``0 .. K-1`` (0 served
first), each a Poisson stream with its share of ``rate_rps``, ``servers`` identical servers, a
deterministic service time ``service_ms`` (the model's latency), one request per server
(unbatched only: no batch window, no batch formation). ``rho = rate * D / c``; ``sigma_k`` is
the load of classes ``0 .. k``.

What is exact and what is approximate:

- The number of requests in the system does not depend on who is served first (every request
  takes ``D``, no server idles while one waits), so it is the FIFO M/D/c queue's
  (``sdlab_model.queues.mdc``). Hence exactly: every class waits with the M/D/c probability
  ``P_w``; if ``P_w <= 1%`` every class's p99 is ``D``; the traffic-weighted mean wait is FIFO's;
  one class *is* M/D/c.
- Mean waits, Cobham's formula: ``W_k = W0 / ((1 - sigma_{k-1})(1 - sigma_k))`` with
  ``W0 = W_FIFO (1 - rho)``. Exact for M/G/1 and for M/M/c; for M/D/c with ``c > 1`` an
  approximation that keeps the conservation law exactly (the weighted sum telescopes to
  ``W_FIFO``). With deterministic service it puts an upper class's mean up to 40% low on many
  servers (``scripts/priorities_check.py`` prints it); the p99s below do not use it.
- Wait distribution of class ``k``: ``W_k = T_k(V_k)``. ``V_k`` is the wait from the work a
  class-``k`` arrival finds ahead of it (classes ``0 .. k`` waiting, and the servers' residual
  service), ``T_k`` the stretch by higher classes arriving while it waits.
  ``V_k = Z_k + Y_k`` (independent): ``Z_k`` the M/D/c FIFO wait of classes ``0 .. k`` alone
  (their own queueing), ``Y_k`` the first free server's residual when the lower classes hold
  the servers: with the probability that makes ``P(V_k > 0) = P_w`` exactly, the least of ``c``
  independent uniform residuals. ``T_k(v)`` is the busy period, started by ``v``, of a queue
  with Poisson arrivals at the higher classes' rate, each moving the wait back by ``D / c``,
  whose law is Takács's ``P(T(v) = v + n d) = v / (v + n d) P(Poisson(lambda_H (v + n d)) = n)``.
  With one server and two classes both are exact (the M/G/1 decomposition
  ``W_1 = Z + Y``, and the low class's delay busy period started by the FIFO wait). With more,
  two approximations: independent uniform residuals (a burst that filled the servers started
  them close together, so the first frees later and the next ones sooner), and ``D / c``, the
  servers' average gap, per overtaking request.
- From ``MIXED_SERVERS`` servers the classes above the lowest mix in a second ``V_k`` while a
  request waits: every server that frees then restarts at once, so the group queues as behind
  one fast server of service ``D / c`` (``mixed_found_wait``). Past total capacity that is all
  there is (``found_wait(..., saturated=True)``).
- Unbatched only, Poisson arrivals, every class the same service time.

Where the approximation is not within its stated accuracy (5% on the p99, against the
simulator, ``scripts/priorities_check.py``), the class's result carries ``approximate_because``.

Sources: A. Cobham, "Priority assignment in waiting line problems", J. Oper. Res. Soc. America
2(1), 70-76 (1954); L. Kleinrock, *Queueing Systems, Vol. 2: Computer Applications* (1976),
§3.6-3.7 (non-preemptive priority, M/G/1 and M/M/c); L. Takács, *Combinatorial Methods in the
Theory of Stochastic Processes* (1967), the hitting-time (ballot) theorem for the busy period;
A. B. Bondi and J. P. Buzen, "The response times of priority classes under preemptive resume
in M/G/m queues", ACM SIGMETRICS (1984), for the fast single server standing for ``c``;
Crommelin (1932) and Franx (2001) for M/D/c (see ``sdlab_model.queues.mdc``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.queues.mdc import MdcWait, log_factorial
from sdlab_model.simulation.converged import batch_means_half_width, mser_truncation
from sdlab_model.simulation.simulator import percentiles
from sdlab_model.workload import Workload

P99 = 0.99
MAX_CLASSES = 4
MAX_SERVERS = 32_000
"""The Lab's largest central queue: 500 replicas x 64 workers."""
"""Triton allows more levels; a page reads two to four."""
_WAIT_BINS = 300
"""Bins of ``V_k``'s law in the stretched (lower-class) quantile."""
_WAIT_TAIL = 1e-6
"""``V_k`` mass left above its bins, counted as later than any time (under 0.01% of the p99's
1%)."""
HIGH_UTILIZATION_FLAG = 0.93
"""Above this utilization every class is flagged: the simulator could not check it to 5%.
This and the thresholds below were set on ``scripts/priorities_check.py``'s tuning grid."""
MIXED_SERVERS = 8
"""From this many servers the classes above the lowest use ``mixed_found_wait`` (set on the
tuning grid: below it the plain ``found_wait`` is within 3.1%, the mixture up to 7.7% high)."""
LOW_FLAG_SERVERS = 4
LOW_FLAG_SHARE_ABOVE = 0.5
LOW_FLAG_WAIT_PROBABILITY = 0.5
"""The lowest class is flagged from this many servers when the classes above carry more than
this share and fewer than this share of requests wait (its p99 comes out high)."""


@dataclass(frozen=True)
class PriorityClass:
    """One class: its name, its share of the requests (0, 1], and its p99 target in ms."""

    name: str
    share: float
    p99_target_ms: float

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("name must not be empty")
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"share={self.share!r} of class {self.name!r} must be in (0, 1]")
        if not self.p99_target_ms > 0.0:
            raise ValueError(
                f"p99_target_ms={self.p99_target_ms!r} of class {self.name!r} must be > 0"
            )


@dataclass(frozen=True)
class PriorityQueue:
    """A queue with strict priority: ``classes[0]`` is served first; shares sum to 1."""

    rate_rps: float
    servers: int
    service_ms: float
    classes: tuple[PriorityClass, ...]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate_rps) and self.rate_rps > 0.0):
            raise ValueError(f"rate_rps={self.rate_rps!r} must be a number > 0")
        if isinstance(self.servers, bool) or not isinstance(self.servers, (int, np.integer)):
            raise ValueError(f"servers={self.servers!r} must be a whole number")
        if not 1 <= self.servers <= MAX_SERVERS:
            raise ValueError(f"servers={self.servers!r} must be in [1, {MAX_SERVERS}]")
        if not (math.isfinite(self.service_ms) and self.service_ms > 0.0):
            raise ValueError(f"service_ms={self.service_ms!r} must be a number > 0")
        if not 1 <= len(self.classes) <= MAX_CLASSES:
            raise ValueError(f"{len(self.classes)} classes: must be 1 to {MAX_CLASSES}")
        total = sum(c.share for c in self.classes)
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"class shares sum to {total!r}: they must sum to 1")
        names = [c.name for c in self.classes]
        if len(set(names)) != len(names):
            raise ValueError(f"class names {names!r} must differ")

    @property
    def offered_load(self) -> float:
        """``a = lambda D``: busy servers on average (``rho c``)."""
        return self.rate_rps * self.service_ms / 1000.0

    @property
    def utilization(self) -> float:
        """``rho = lambda D / c``."""
        return self.offered_load / self.servers

    def class_rates_rps(self) -> np.ndarray:
        """Each class's arrival rate."""
        return self.rate_rps * np.array([c.share for c in self.classes])

    def loads_above(self) -> np.ndarray:
        """``sigma_{k-1}``: the utilization of the classes served before class ``k``."""
        shares = np.array([c.share for c in self.classes])
        return self.utilization * np.concatenate(([0.0], np.cumsum(shares)[:-1]))

    def stable_classes(self) -> np.ndarray:
        """Whether each class has a steady state: its load with the classes above under 1."""
        shares = np.cumsum([c.share for c in self.classes])
        return self.utilization * shares < 1.0

    def with_rate(self, rate_rps: float) -> PriorityQueue:
        """The same classes and servers at another total rate."""
        return PriorityQueue(rate_rps, self.servers, self.service_ms, self.classes)


@dataclass(frozen=True)
class ClassLatency:
    """One class's analytic result. ``p99_ms`` is wait plus service; ``inf`` where unstable,
    ``nan`` where not modelled (past total capacity, a class still stable)."""

    name: str
    share: float
    p99_target_ms: float
    mean_wait_ms: float
    p99_ms: float
    is_stable: bool
    approximate_because: str | None

    @property
    def meets_target(self) -> bool:
        """Whether the p99 is within the target (False where unknown or unstable)."""
        return bool(self.p99_ms <= self.p99_target_ms)


@dataclass(frozen=True)
class PriorityLatency:
    """``priority_latency``'s answer: each class, and FIFO (no priority) for comparison."""

    queue: PriorityQueue
    classes: tuple[ClassLatency, ...]
    fifo_p99_ms: float
    fifo_mean_wait_ms: float
    wait_probability: float
    is_stable: bool


def cobham_mean_waits(
    fifo_mean_wait: float, utilization: float, loads_above: np.ndarray, class_loads: np.ndarray
) -> np.ndarray:
    """Cobham's mean waits (same unit as ``fifo_mean_wait``) of each class.

    ``W_k = W0 / ((1 - sigma_{k-1})(1 - sigma_k))`` with ``W0 = W_FIFO (1 - rho)``: the
    M/G/c form (exact for M/G/1 and M/M/c), scaled so that ``sum_k rho_k W_k = rho W_FIFO``,
    the conservation law that holds exactly when every class takes the same service time.
    ``inf`` where ``sigma_k >= 1``.

    Sources: Cobham (1954); Kleinrock, *Queueing Systems* Vol. 2 (1976), eq. 3.30 and §3.7.
    """
    below = loads_above + class_loads
    w0 = fifo_mean_wait * (1.0 - utilization)
    with np.errstate(divide="ignore"):
        waits = w0 / ((1.0 - loads_above) * (1.0 - below))
    return np.where(below < 1.0, waits, np.inf)


def busy_period_cdf(start: np.ndarray, t: float, rate: float, step: float) -> np.ndarray:
    """``P(T(v) <= t)`` for each ``v`` in ``start``: ``T(v)`` is the busy period started by
    work ``v`` of a queue with Poisson arrivals at ``rate`` each bringing work ``step``.

    ``P(T(v) = v + n step) = v / (v + n step) * P(Poisson(rate (v + n step)) = n)``
    (Takács's hitting-time theorem; exact). ``T(0) = 0``.

    Source: Takács (1967); Kleinrock Vol. 1 (1975) §5.9 for the M/D/1 busy period.
    """
    start = np.asarray(start, dtype=float)
    if rate <= 0.0:
        return (start <= t).astype(float)
    top = max(math.floor((t - float(start.min())) / step), -1)
    n = np.arange(top + 1, dtype=float)[None, :]
    v = start[:, None]
    length = v + n * step
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = rate * length
        log_pmf = n * np.log(mean) - mean - log_factorial(n)
        terms = np.where(length <= t, v / length * np.exp(log_pmf), 0.0)
    cdf = np.where(start > 0.0, terms.sum(axis=1), 1.0)
    return np.where(start <= t, np.minimum(cdf, 1.0), 0.0)


def residual_cdf(y: np.ndarray, servers: int, busy_share: float) -> np.ndarray:
    """``P(Y <= y)`` (units of ``D``): ``Y`` is 0 with probability ``1 - busy_share``, else the
    time until the first of ``servers`` busy servers frees, taken as the least of ``servers``
    independent uniform residuals, ``P(Y > y) = (1 - y)^c`` on ``[0, 1]``.

    Exact for one server (the residual of the request in service is uniform); with more, the
    residuals of the servers busy at an arrival are not independent (a burst that filled them
    started them close together), the approximation the check flags.
    """
    y = np.clip(np.asarray(y, dtype=float), 0.0, 1.0)
    busy = np.where(y >= 0.0, 1.0 - (1.0 - y) ** servers, 0.0)
    return (1.0 - busy_share) + busy_share * busy


@dataclass(frozen=True)
class FoundWait:
    """The law of ``V_k`` (units of ``D``), binned: an atom at 0, bin midpoints and masses, and
    the mass above the last bin (counted as later than any time asked)."""

    at_zero: float
    starts: np.ndarray
    masses: np.ndarray
    tail: float

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """``P(V <= x)`` at each ``x``, bins counted at their midpoints."""
        inside = self.starts[None, :] <= np.asarray(x, dtype=float)[:, None]
        return self.at_zero + np.sum(self.masses[None, :] * inside, axis=1)

    def survival(self, t: float, rate_above: float, step: float) -> float:
        """``P(T(V) > t)``: ``V`` stretched by arrivals at ``rate_above`` of work ``step``."""
        done = busy_period_cdf(self.starts, t, rate_above, step)
        return self.tail + float(np.dot(self.masses, 1.0 - done))


def found_wait(
    servers: int, group_load: float, wait_probability: float, saturated: bool = False
) -> FoundWait:
    """``V_k = Z + Y``: ``Z`` the M/D/c FIFO wait of classes ``0 .. k`` alone (offered load
    ``group_load``), ``Y`` the first free server's residual (``residual_cdf``) where the other
    classes keep the servers busy, with the probability that makes ``P(V > 0)`` the exact
    ``wait_probability`` (``Z`` and ``Y`` independent).

    ``saturated``: the classes below never drain, so every server is always busy and restarts
    the moment it frees: the group can start at most one request per free epoch, ``c`` epochs
    per ``D``. Its own queueing ``Z`` is then that of one server of service ``D / c`` (M/D/1 at
    the group's utilization, Bondi and Buzen's fast single server), not c servers that a
    burst could all start at once; ``Y`` is always there."""
    scale = 1.0 / servers if saturated else 1.0
    group = (
        MdcWait.solve(1, group_load / servers) if saturated else MdcWait.solve(servers, group_load)
    )
    group_wait = group.wait_probability
    busy_share = max(0.0, (wait_probability - group_wait) / (1.0 - group_wait))
    # Below _WAIT_TAIL the group alone never waits, as far as a p99 can tell (and a quantile
    # of 1 - 1e-19 would round to 1, which no wait reaches).
    top_z = group.wait_quantile(1.0 - _WAIT_TAIL * group_wait) if group_wait > _WAIT_TAIL else 0.0
    z_edges = np.linspace(0.0, top_z, _WAIT_BINS + 1)
    z_cdf = np.array([group.wait_cdf(x) for x in z_edges])
    z_mid, z_mass = scale * 0.5 * (z_edges[:-1] + z_edges[1:]), np.diff(z_cdf)
    edges = np.linspace(0.0, scale * top_z + 1.0, _WAIT_BINS + 1)
    # P(Z + Y <= v): Z's atom at 0 and bins, each convolved with Y's law.
    cdf = z_cdf[0] * residual_cdf(edges, servers, busy_share) + np.sum(
        z_mass[None, :]
        * residual_cdf(edges[:, None] - z_mid[None, :], servers, busy_share)
        * (edges[:, None] >= z_mid[None, :]),
        axis=1,
    )
    at_zero = z_cdf[0] * (1.0 - busy_share)
    masses = np.diff(np.maximum.accumulate(np.maximum(cdf, at_zero)))
    return FoundWait(at_zero, 0.5 * (edges[:-1] + edges[1:]), masses, max(0.0, 1.0 - cdf[-1]))


def mixed_found_wait(
    servers: int, group_load: float, wait_probability: float, lower_waiting: float
) -> FoundWait:
    """``V_k`` on many servers: ``found_wait`` saturated (one start of the group's per free
    epoch) while lower classes wait, with probability ``lower_waiting``, and ``found_wait`` as
    it is otherwise (its ``P(V > 0)`` set so that the two together keep ``wait_probability``).

    Why: while a lower class waits, every server that frees restarts at once, so a burst of
    the group's requests cannot start together on servers that had been idle; the group
    queues as behind one fast server. Independent uniform residuals and the c-server ``Z``
    alone put these classes' p99 4-8% low on 8 to 32 servers (the tuning grid)."""
    calm = max(0.0, (wait_probability - lower_waiting) / (1.0 - lower_waiting))
    plain = found_wait(servers, group_load, calm)
    busy = found_wait(servers, group_load, 1.0, saturated=True)
    top = max(float(plain.starts[-1]), float(busy.starts[-1]))
    edges = np.linspace(0.0, top * (1.0 + 1.0 / _WAIT_BINS), _WAIT_BINS + 1)
    cdf = (1.0 - lower_waiting) * plain.cdf(edges) + lower_waiting * busy.cdf(edges)
    cdf = np.maximum.accumulate(np.minimum(cdf, 1.0))
    return FoundWait(cdf[0], 0.5 * (edges[:-1] + edges[1:]), np.diff(cdf), max(0.0, 1.0 - cdf[-1]))


def _p99(found: FoundWait, rate_above: float, servers: int) -> float:
    """The p99 (units of ``D``) of ``T(V)``, by bisection to 1e-4 relative."""
    step = 1.0 / servers

    def late(t: float) -> bool:
        return found.survival(t, rate_above, step) > 1.0 - P99

    if not late(0.0):
        return 0.0
    lo, hi = 0.0, max(float(found.starts[-1]), step)
    for _ in range(64):
        if not late(hi):
            break
        lo, hi = hi, 2.0 * hi
    else:
        raise ArithmeticError(f"no p99 below {hi:.3g} D: the wait's law is not normalised")
    while hi - lo > 1e-4 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if late(mid) else (lo, mid)
    return hi


def _flag(queue: PriorityQueue, k: int, exact: bool, wait_probability: float) -> str | None:
    """Why class ``k``'s p99 may be off by more than 5%, or None (the rules and their
    thresholds were set on ``scripts/priorities_check.py``'s tuning grid)."""
    if exact:
        return None
    c = queue.servers
    shares = np.cumsum([spec.share for spec in queue.classes])
    if queue.utilization > HIGH_UTILIZATION_FLAG:
        return (
            f"utilization {queue.utilization:.0%} is over {HIGH_UTILIZATION_FLAG:.0%}, where "
            "the simulator's 95% interval stayed wider than ±5% within its budget: unchecked"
        )
    lowest = k == len(queue.classes) - 1
    above = shares[k - 1] if k else 0.0
    if (
        lowest
        and c >= LOW_FLAG_SERVERS
        and above > LOW_FLAG_SHARE_ABOVE
        and (wait_probability < LOW_FLAG_WAIT_PROBABILITY)
    ):
        return (
            f"the classes above carry {above:.0%} of the requests and {wait_probability:.0%} "
            "wait: each overtaking request is taken to cost D/c, the servers' average gap, "
            "but the gaps after the first free server are shorter when the residuals bunch; "
            "on the tuning grid such p99s came out 6-9% high"
        )
    return None


def priority_latency(queue: PriorityQueue) -> PriorityLatency:
    """Each class's mean wait (Cobham) and p99 under strict non-preemptive priority, in ms,
    and the FIFO queue's p99 for comparison (the module docstring states the model)."""
    c, d = queue.servers, queue.service_ms
    loads_above = queue.loads_above()
    class_loads = queue.utilization * np.array([k.share for k in queue.classes])
    if queue.utilization >= 1.0:
        return _past_capacity(queue, loads_above, class_loads)
    fifo = MdcWait.solve(c, queue.offered_load)
    p_wait = fifo.wait_probability
    means = cobham_mean_waits(fifo.mean_wait, queue.utilization, loads_above, class_loads)
    results = []
    for k, spec in enumerate(queue.classes):
        if p_wait <= 1.0 - P99 or len(queue.classes) == 1:
            p99_units, exact = (fifo.wait_quantile(P99), True)
        else:
            group_load = (loads_above[k] + class_loads[k]) * c
            lowest = k == len(queue.classes) - 1
            if c >= MIXED_SERVERS and not lowest:
                lower_waiting = float(fifo.queue_pmf[1:].sum())
                found = mixed_found_wait(c, group_load, p_wait, lower_waiting)
            else:
                found = found_wait(c, min(group_load, queue.offered_load), p_wait)
            p99_units = _p99(found, loads_above[k] * c, c)
            exact = c == 1 and len(queue.classes) == 2
        results.append(
            ClassLatency(
                name=spec.name,
                share=spec.share,
                p99_target_ms=spec.p99_target_ms,
                mean_wait_ms=float(means[k]) * d,
                p99_ms=(1.0 + p99_units) * d,
                is_stable=True,
                approximate_because=_flag(queue, k, exact, p_wait),
            )
        )
    return PriorityLatency(
        queue=queue,
        classes=tuple(results),
        fifo_p99_ms=(1.0 + fifo.wait_quantile(P99)) * d,
        fifo_mean_wait_ms=fifo.mean_wait * d,
        wait_probability=p_wait,
        is_stable=True,
    )


def _past_capacity(queue: PriorityQueue, loads_above, class_loads) -> PriorityLatency:
    """At or past capacity: the classes whose own and higher load reach 1 are unstable (their
    backlog grows without bound); the ones above them are still served first. For those, every
    server is always busy (``P_w = 1``) and the same ``T_k(Z_k + Y_k)`` applies with ``Y_k``
    always present: approximate, and flagged (the mean wait is not modelled there)."""
    c = queue.servers
    results = []
    for k, spec in enumerate(queue.classes):
        stable = bool(loads_above[k] + class_loads[k] < 1.0)
        p99_ms = math.inf
        if stable:
            found = found_wait(c, (loads_above[k] + class_loads[k]) * c, 1.0, saturated=True)
            p99_ms = (1.0 + _p99(found, loads_above[k] * c, c)) * queue.service_ms
        results.append(
            ClassLatency(
                name=spec.name,
                share=spec.share,
                p99_target_ms=spec.p99_target_ms,
                mean_wait_ms=math.nan if stable else math.inf,
                p99_ms=p99_ms,
                is_stable=stable,
                approximate_because=(
                    "past total capacity every server is always busy and, with a fixed "
                    "service time, keeps its phase: the model takes the phases as spread at "
                    "random (what any jitter in service time does), a simulation keeps them "
                    "where the overload froze them; on 30 points (1-32 servers, 105-150% load) "
                    "the two differed by -14% to +8%, 23 within 5%"
                    if stable
                    else None
                ),
            )
        )
    return PriorityLatency(queue, tuple(results), math.inf, math.inf, 1.0, False)


def queue_from_workload(workload: Workload, classes: tuple[PriorityClass, ...]) -> PriorityQueue:
    """The priority queue one of ``workload``'s queues is: the central queue's ``servers`` at the
    whole rate, or else one replica's slots at ``rate / replicas`` (Triton keeps a priority
    queue per model instance group; random routing leaves a replica a Poisson stream, other
    balancers nearly). Unbatched: every request alone, at ``single_request_ms``."""
    if workload.is_central_queue:
        servers, rate_rps = workload.servers, workload.rate_rps
    else:
        servers, rate_rps = workload.slots_per_replica, workload.rate_rps / workload.replicas
    return PriorityQueue(rate_rps, int(servers), float(workload.single_request_ms), classes)


@dataclass(frozen=True)
class LoadSweep:
    """Each class's p99 (ms, rows) and FIFO's over ``utilizations`` (columns)."""

    utilizations: np.ndarray
    class_p99_ms: np.ndarray
    fifo_p99_ms: np.ndarray
    flagged: np.ndarray


def p99_against_load(queue: PriorityQueue, utilizations: np.ndarray) -> LoadSweep:
    """``priority_latency`` at each utilization (the rate scaled, everything else kept)."""
    loads = np.asarray(utilizations, dtype=float)
    p99 = np.full((len(queue.classes), loads.size), np.nan)
    flagged = np.zeros((len(queue.classes), loads.size), dtype=bool)
    fifo = np.full(loads.size, np.inf)
    per_utilization_rps = queue.rate_rps / queue.utilization
    for j, load in enumerate(loads):
        result = priority_latency(queue.with_rate(load * per_utilization_rps))
        p99[:, j] = [c.p99_ms for c in result.classes]
        flagged[:, j] = [c.approximate_because is not None for c in result.classes]
        fifo[j] = result.fifo_p99_ms
    return LoadSweep(loads, p99, fifo, flagged)


SIM_REL_HALF_WIDTH = 0.02
"""The simulator's target: each class's p99 95% interval within ±2% of it."""
SIM_MAX_REQUESTS = 2_000_000
"""Default budget of ``simulate_priorities``: arrivals of every run together."""
SIM_MIN_CLASS_REQUESTS = 20_000
"""Fewest measured requests of a class: 20 batch-means batches of 1,000, each p99 the tenth
largest of its batch."""
_SIM_FIRST_RUN = 100_000
_SIM_MEASURED_END = 0.95
"""Requests arriving in the run's last 5% are not measured: arrivals stop at the end, so late
low-class requests would be overtaken by fewer higher ones than in steady state."""


@dataclass(frozen=True)
class ClassSim:
    """One class as simulated: its p99 (ms) with a 95% batch-means interval, its mean wait."""

    name: str
    measured_requests: int
    p99_ms: float
    p99_ci_ms: tuple[float, float]
    mean_wait_ms: float

    def contains(self, value_ms: float) -> bool:
        """Whether ``value_ms`` is inside the interval."""
        return self.p99_ci_ms[0] <= value_ms <= self.p99_ci_ms[1]


@dataclass(frozen=True)
class PrioritySim:
    """What ``simulate_priorities`` measured. ``converged`` is False when the budget ran out
    before every class's interval was within ``rel_half_width`` (the note says why)."""

    classes: tuple[ClassSim, ...]
    converged: bool
    simulated_requests: int
    simulated_s: float
    warmup_s: float
    seed: int
    note: str


def _priority_kernel():
    # Imported here, not at module top: `import sdlab_model` must not import numba or compile.
    from sdlab_model.overload._priority_kernel import run_priority_queue

    return run_priority_queue


def _sim_trace(queue: PriorityQueue, seed: int, count: int):
    """``count`` arrivals (ms), grouped by class in arrival order; class bounds; starts (ms)."""
    gap_stream, class_stream = np.random.SeedSequence(seed).spawn(2)
    gaps_ms = np.random.default_rng(gap_stream).exponential(1000.0 / queue.rate_rps, count)
    shares = np.array([c.share for c in queue.classes])
    marks = np.random.default_rng(class_stream).choice(shares.size, size=count, p=shares)
    order = np.argsort(marks, kind="stable")
    arrival_ms = np.cumsum(gaps_ms)[order]
    class_start = np.concatenate(([0], np.cumsum(np.bincount(marks, minlength=shares.size))))
    start_ms = np.empty(count)
    _priority_kernel()(arrival_ms, class_start, queue.servers, queue.service_ms, start_ms)
    return arrival_ms, class_start.astype(np.int64), start_ms


def _analyse_sim(queue, arrival_ms, class_start, start_ms):
    """Per class: measured latencies (after the warm-up, before the end); the warm-up (ms)."""
    end_ms = float(np.quantile(arrival_ms, _SIM_MEASURED_END))
    warmup_ms = 0.0
    stable = queue.stable_classes()
    for k in np.flatnonzero(stable):
        waits = (start_ms - arrival_ms)[class_start[k] : class_start[k + 1]]
        cut = mser_truncation(waits)
        if cut:
            warmup_ms = max(warmup_ms, float(arrival_ms[class_start[k] + cut]))
    measured = []
    for k in range(len(queue.classes)):
        arrivals = arrival_ms[class_start[k] : class_start[k + 1]]
        keep = (arrivals >= warmup_ms) & (arrivals <= end_ms) & stable[k]
        measured.append((start_ms[class_start[k] : class_start[k + 1]] - arrivals)[keep])
    return measured, warmup_ms, end_ms


def _class_sim(
    spec: PriorityClass, waits_ms: np.ndarray, service_ms: float, stable: bool
) -> ClassSim:
    if not stable:
        return ClassSim(spec.name, 0, math.inf, (math.inf, math.inf), math.inf)
    if waits_ms.size < 100:
        return ClassSim(spec.name, int(waits_ms.size), math.nan, (math.nan, math.nan), math.nan)
    latency = waits_ms + service_ms
    p99 = percentiles(latency, (100.0 * P99,))[0]
    half = batch_means_half_width(latency)
    return ClassSim(
        spec.name, int(latency.size), p99, (p99 - half, p99 + half), float(waits_ms.mean())
    )


def _sim_shortfall(classes, rel_half_width, warmup_ms, end_ms) -> list[str]:
    reasons = []
    if 2.0 * warmup_ms > end_ms:
        reasons.append(f"its warm-up ({warmup_ms / 1000:.3g} s) is over half the run")
    for result in classes:
        if math.isinf(result.p99_ms):
            continue
        if result.measured_requests < SIM_MIN_CLASS_REQUESTS:
            reasons.append(
                f"{result.name}: {result.measured_requests:,} requests measured, under "
                f"{SIM_MIN_CLASS_REQUESTS:,}"
            )
            continue
        relative = (result.p99_ci_ms[1] - result.p99_ms) / result.p99_ms
        if relative > rel_half_width:
            reasons.append(f"{result.name}: interval ±{relative:.1%}, over ±{rel_half_width:.1%}")
    return reasons


def _next_run(classes, rel_half_width, count: int) -> int:
    """Arrivals a run needs, from this run's worst class (at least twice ``count``)."""
    needed = float(count)
    for result in classes:
        if math.isinf(result.p99_ms):
            continue
        if result.measured_requests < SIM_MIN_CLASS_REQUESTS:
            needed = max(needed, count * SIM_MIN_CLASS_REQUESTS / max(result.measured_requests, 1))
        elif result.p99_ms > 0:
            ratio = (result.p99_ci_ms[1] - result.p99_ms) / (rel_half_width * result.p99_ms)
            needed = max(needed, count * ratio * ratio)
    return max(math.ceil(1.25 * needed), 2 * count)


def simulate_priorities(
    queue: PriorityQueue,
    *,
    seed: int = 0,
    rel_half_width: float = SIM_REL_HALF_WIDTH,
    max_requests: int = SIM_MAX_REQUESTS,
) -> PrioritySim:
    """Simulate ``queue`` until every class's p99 interval is within ``rel_half_width`` of it,
    or until ``max_requests`` (every run together) cannot pay for a longer run.

    Poisson arrivals, each request's class an independent draw with the classes' shares (the
    superposition of independent Poisson streams); the compiled recursion of
    ``_priority_kernel``. Each run starts empty; warm-up by MSER-5 on each class's waits (the
    latest cut counts for all); requests arriving in the last 5% are not measured. The p99's
    interval is by 20 batch means (``sdlab_model.simulation.converged``).

    Past total capacity the classes without a steady state (their load with those above at 1
    or more) are simulated but not measured: their p99 is ``inf``.

    Approximations: finite runs (the interval states the sampling error); batch means of one
    run are slightly narrow when batches are short against the queue's memory.

    Sources: Law, *Simulation Modeling and Analysis* (5th ed.), ch. 9; White (1997) for MSER.
    """
    stable = queue.stable_classes()
    if not stable[0]:
        raise ValueError(f"utilization {queue.utilization:.3g}: no class has a steady state")
    count = min(_SIM_FIRST_RUN, max_requests)
    spent = 0
    while True:
        arrival_ms, class_start, start_ms = _sim_trace(queue, seed, count)
        spent += count
        measured, warmup_ms, end_ms = _analyse_sim(queue, arrival_ms, class_start, start_ms)
        classes = tuple(
            _class_sim(spec, waits, queue.service_ms, bool(ok))
            for spec, waits, ok in zip(queue.classes, measured, stable, strict=True)
        )
        reasons = _sim_shortfall(classes, rel_half_width, warmup_ms, end_ms)
        longer = min(_next_run(classes, rel_half_width, count), max_requests - spent)
        if not reasons or longer <= count:
            break
        count = longer
    note = "Converged." if not reasons else "Not converged: " + "; ".join(reasons) + "."
    return PrioritySim(
        classes, not reasons, spent, float(arrival_ms[-1]) / 1000.0, warmup_ms / 1000.0, seed, note
    )
