"""The fallback model against its simulation, out of sample: a tuning grid where the flag rule
(``fallback.flag_reason``) was set, and a held-out grid made after it and only reported.

Compared (``HELD``): the shares answered by the fallback and lost (judged against at least
``validation.SHARE_FLOOR``), the p99 of every answer and the goodput (against at least
``validation.GOODPUT_FLOOR`` of capacity). Tolerance 5% unbatched, 15% batched; a flagged point
is not held to it. The fallback path's own p99 (``REPORTED``) is shown with its error but held
to nothing: the overflow of a bounded queue is burstier than the Poisson stream the model gives
the fallback, and its wait there is longer than modelled (see the docs' Degradation section).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sdlab_model.overload.fallback import FallbackModel, FallbackResult, with_fallback
from sdlab_model.overload.fallback_simulate import FallbackSim, simulate_fallback
from sdlab_model.overload.policy import OverloadPolicy, Station
from sdlab_model.overload.validation import (
    BATCHED_TOLERANCE,
    GOODPUT_FLOOR,
    SHARE_FLOOR,
    UNBATCHED_TOLERANCE,
    replica_design,
)
from sdlab_model.workload import Workload

HELD = ("fallback_share", "lost_share", "answered_p99_ms", "goodput_rps")
REPORTED = ("fallback_p99_ms",)


@dataclass(frozen=True)
class FallbackPoint:
    label: str
    workload: Workload
    policy: OverloadPolicy
    fallback: FallbackModel
    multiple: float

    @property
    def fresh_rps(self) -> float:
        return self.multiple * Station.of(self.workload).capacity_rps


def _points(name, workload, policies, fallbacks, multiples) -> tuple[FallbackPoint, ...]:
    return tuple(
        FallbackPoint(f"{name}, {p_name}, {f_name}, {m:g}x", workload, policy, fallback, m)
        for p_name, policy in policies
        for f_name, fallback in fallbacks
        for m in multiples
    )


TUNING_GRID: tuple[FallbackPoint, ...] = _points(
    "c=8 D=20ms",
    replica_design(8, 20.0, 100.0),
    (
        ("K=8", OverloadPolicy(queue_limit=8)),
        ("K=8 T=60ms", OverloadPolicy(queue_limit=8, deadline_ms=60.0)),
    ),
    (
        ("fb 4x5ms", FallbackModel(1, 4, 5.0)),
        ("fb 2x10ms K=4 +timeouts", FallbackModel(1, 2, 10.0, queue_limit=4, take_timed_out=True)),
    ),
    (1.02, 1.2, 2.0, 3.0),
)
"""Where ``fallback.OVERFLOW_FLAG_SHARE`` and ``FALLBACK_FLAG_LOAD`` were set."""

HELD_OUT_GRID: tuple[FallbackPoint, ...] = _points(
    "c=16 D=10ms",
    replica_design(16, 10.0, 50.0),
    (
        ("K=24", OverloadPolicy(queue_limit=24)),
        ("K=24 T=25ms", OverloadPolicy(queue_limit=24, deadline_ms=25.0)),
    ),
    (
        ("fb 8x3ms", FallbackModel(1, 8, 3.0)),
        ("fb 3x4ms K=6 +timeouts", FallbackModel(1, 3, 4.0, queue_limit=6, take_timed_out=True)),
    ),
    (1.1, 1.6, 2.5),
) + _points(
    "c=4 B=8 D=20ms",
    replica_design(4, 20.0, 400.0, batch=8),
    (("K=32", OverloadPolicy(queue_limit=32)),),
    (("fb 4x8ms", FallbackModel(1, 4, 8.0)),),
    (1.5, 2.5),
)
"""Made after the flag rule; reported only."""


@dataclass(frozen=True)
class FallbackRow:
    point: FallbackPoint
    analytic: FallbackResult
    simulated: FallbackSim
    errors: dict[str, float]
    tolerance: float

    @property
    def flagged(self) -> bool:
        return self.analytic.flagged_because is not None

    @property
    def worst_error(self) -> float:
        return max(self.errors[name] for name in HELD)

    @property
    def miss(self) -> bool:
        return self.worst_error > self.tolerance and not self.flagged


def _relative(model: float, simulated: float) -> float:
    if not (math.isfinite(model) and math.isfinite(simulated)):
        return 0.0 if model == simulated or (math.isnan(model) and math.isnan(simulated)) else 1.0
    return abs(model - simulated) / abs(simulated) if simulated else abs(model)


def check_fallback_point(point: FallbackPoint, seed: int = 0) -> FallbackRow:
    """``with_fallback`` and ``simulate_fallback`` at ``point``, and their relative errors."""
    analytic = with_fallback(point.workload, point.policy, point.fallback, point.fresh_rps)
    simulated = simulate_fallback(
        point.workload, point.policy, point.fallback, point.fresh_rps, seed=seed
    )
    capacity = Station.of(point.workload).capacity_rps
    errors = {}
    for name in ("fallback_share", "lost_share"):
        sim = simulated[name].estimate
        errors[name] = abs(getattr(analytic, name) - sim) / max(sim, SHARE_FLOOR)
    for name in ("answered_p99_ms", *REPORTED):
        errors[name] = _relative(getattr(analytic, name), simulated[name].estimate)
    sim_good = simulated["goodput_rps"].estimate
    errors["goodput_rps"] = abs(analytic.goodput_rps - sim_good) / max(
        sim_good, GOODPUT_FLOOR * capacity
    )
    batched = point.workload.effective_max_batch_size > 1
    tolerance = BATCHED_TOLERANCE if batched else UNBATCHED_TOLERANCE
    return FallbackRow(point, analytic, simulated, errors, tolerance)


def check_fallback(grid: tuple[FallbackPoint, ...], seed: int = 0) -> tuple[FallbackRow, ...]:
    return tuple(check_fallback_point(point, seed) for point in grid)
