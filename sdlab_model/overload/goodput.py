"""Goodput against offered load, from a quarter of capacity to three times it, for the variants
that tell the story: nothing shed (the cliff at capacity), a queue limit, a limit and a deadline
(flat past capacity), retries without a budget (the storm) and with one.

``goodput_curve(workload, policy)`` builds the variants from one chosen policy (its limit,
deadline, retries and budget; the defaults of ``default_policy`` where it has none) and runs
``analytic.overload`` at each multiple of capacity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sdlab_model.overload.analytic import OverloadResult, overload
from sdlab_model.overload.policy import ENVOY_BUDGET_PERCENT, OverloadPolicy, Station
from sdlab_model.workload import Workload

MULTIPLES: tuple[float, ...] = tuple(k / 4 for k in range(1, 13))
"""Fresh load over capacity: 0.25x to 3x in quarters."""
DEFAULT_RETRIES = 3
"""Envoy's and gRPC's usual ``num_retries`` / ``maxAttempts - 1``."""
LIMIT_SHARE = 0.9
"""The default limit's full queue waits this share of the room the target leaves."""
VARIANTS: tuple[str, ...] = (
    "no shedding",
    "queue limit",
    "queue limit + deadline",
    "retries, no budget",
    "retries, budget",
)


def default_policy(workload: Workload) -> OverloadPolicy:
    """A limit whose full queue (full batches) still meets the p99 target with a tenth to
    spare, the target as deadline, three retries and Envoy's 20% budget: the variants' numbers
    where the chosen policy has none."""
    station = Station.of(workload)
    c, d = station.effective_servers, station.effective_service_ms
    room = max(0.0, workload.p99_target_ms - d)
    limit = max(1, math.floor(LIMIT_SHARE * room * c / d))
    return OverloadPolicy(
        queue_limit=limit,
        deadline_ms=workload.p99_target_ms,
        max_retries=DEFAULT_RETRIES,
        retry_budget=ENVOY_BUDGET_PERCENT / 100.0,
    )


def variants(workload: Workload, policy: OverloadPolicy) -> dict[str, OverloadPolicy]:
    """The five variants. The limit and deadline variants take ``policy``'s numbers (defaults
    where it has none); the retry variants retry on ``policy``'s own shedding (the defaults'
    limit and deadline only where it sheds nothing), so a deadline without a limit shows its
    storm."""
    base = default_policy(workload)
    limit = base.queue_limit if policy.queue_limit is None else policy.queue_limit
    deadline = base.deadline_ms if policy.deadline_ms is None else policy.deadline_ms
    retries = policy.max_retries or base.max_retries
    budget = base.retry_budget if policy.retry_budget is None else policy.retry_budget
    shed = OverloadPolicy(queue_limit=limit, deadline_ms=deadline, backoff_ms=policy.backoff_ms)
    own = replace(policy, max_retries=retries, retry_budget=None) if policy.sheds else None
    retrying = own or replace(shed, max_retries=retries)
    return {
        "no shedding": OverloadPolicy(backoff_ms=policy.backoff_ms),
        "queue limit": replace(shed, deadline_ms=None),
        "queue limit + deadline": shed,
        "retries, no budget": retrying,
        "retries, budget": replace(retrying, retry_budget=budget),
    }


@dataclass(frozen=True)
class GoodputCurve:
    """Goodput (req/s) per variant at each multiple; ``current`` is the chosen policy's own."""

    capacity_rps: float
    multiples: tuple[float, ...]
    policies: dict[str, OverloadPolicy]
    results: dict[str, tuple[OverloadResult, ...]]
    full_batch_ms: float
    """A slot's time for a full batch: what a request takes past capacity, before any wait."""
    target_ms: float

    @property
    def target_unreachable_past_capacity(self) -> bool:
        """Full batches alone take longer than the target: past capacity nothing is on time."""
        return self.full_batch_ms > self.target_ms

    def goodput_rps(self, variant: str) -> tuple[float, ...]:
        return tuple(r.goodput_rps for r in self.results[variant])


def goodput_curve(
    workload: Workload,
    policy: OverloadPolicy,
    multiples: tuple[float, ...] = MULTIPLES,
) -> GoodputCurve:
    """Each variant's ``overload`` at every multiple of capacity, and the chosen ``policy``'s
    own as ``"current"``."""
    policies = {**variants(workload, policy), "current": policy}
    station = Station.of(workload)
    capacity = station.capacity_rps
    results = {
        name: tuple(overload(workload, p, fresh_rps=m * capacity) for m in multiples)
        for name, p in policies.items()
    }
    return GoodputCurve(
        capacity,
        tuple(multiples),
        policies,
        results,
        station.effective_service_ms,
        workload.p99_target_ms,
    )
