"""What a replica does with more work than it can serve, and the station it does it on.

- ``OverloadPolicy``: a queue limit, a request deadline, client retries and a retry budget,
  validated once with a message naming the field, the value and the range.
- ``Station``: one queue of the Lab's design as the overload model sees it: ``servers`` alike,
  each taking ``service_ms`` per request (deterministic), Poisson arrivals. Per replica behind a
  balancer, the whole fleet for the central queue.

The knobs are the servers' own:

- ``queue_limit``: requests that may wait (not counting those in service) before the next is
  rejected at once: Triton's ``dynamic_batching.default_queue_policy.max_queue_size`` (0 there
  means no limit), Envoy's circuit breaker ``max_pending_requests``. ``None``: no limit.
- ``deadline_ms``: a request still waiting this long after it arrived leaves the queue unserved
  (Triton's ``default_timeout_microseconds`` with ``timeout_action`` REJECT). The client waits
  as long (gRPC's deadline, propagated): an answer that starts in time but ends after it is
  served, yet *late*, work spent on a client that has gone. ``None``: no deadline.
- ``max_retries``: a client retries a rejected, timed-out or late request up to this many times,
  after an exponential backoff of mean ``backoff_ms`` (Envoy's ``retry_policy.num_retries``, gRPC's
  ``retryPolicy.maxAttempts - 1``).
- ``retry_budget``: retries allowed as a share of fresh requests (Envoy's
  ``retry_budget.budget_percent``, 20% by default; Finagle's ``RetryBudget``; gRPC's retry
  throttling token bucket). Each fresh request deposits ``retry_budget`` tokens, a retry takes
  one, the bucket holds ``RETRY_BUDGET_DEPTH``; a retry without a token is not sent.
  ``None``: retries are not budgeted.

Sources: Triton Inference Server, ``model_config.proto`` (``ModelQueuePolicy``: ``timeout_action``,
``default_timeout_microseconds``, ``allow_timeout_override``, ``max_queue_size``); Envoy,
``config.cluster.v3.CircuitBreakers`` (``max_pending_requests``, ``retry_budget``:
``budget_percent`` default 20%, ``min_retry_concurrency`` default 3); gRPC A6 "Client Retries"
(retry throttling: ``maxTokens``, ``tokenRatio``); Beyer et al., *Site Reliability Engineering*
(2016) ch. 22, "Addressing Cascading Failures" (retry budgets, deadlines).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sdlab_model.workload import Workload

ENVOY_BUDGET_PERCENT = 20.0
"""Envoy's default ``retry_budget.budget_percent``."""
RETRY_BUDGET_DEPTH = 3.0
"""Tokens the retry bucket holds: Envoy's default ``min_retry_concurrency`` (3), read as the
retries a quiet client may always send in a burst."""
DEFAULT_BACKOFF_MS = 25.0
"""Envoy's default retry backoff ``base_interval`` is 25 ms; here the mean of every backoff."""

POLICY_RANGES: dict[str, tuple[float, float]] = {
    "queue_limit": (0, 100_000),
    "deadline_ms": (0.001, 600_000.0),
    "max_retries": (0, 10),
    "retry_budget": (0.0, 1.0),
    "backoff_ms": (0.0, 60_000.0),
}
"""Allowed values of each ``OverloadPolicy`` field (``None`` is allowed where it says so)."""


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class OverloadPolicy:
    """A replica's overload behaviour: see the module docstring for each field."""

    queue_limit: int | None = None
    deadline_ms: float | None = None
    max_retries: int = 0
    retry_budget: float | None = None
    backoff_ms: float = DEFAULT_BACKOFF_MS

    def __post_init__(self) -> None:
        for name, (low, high) in POLICY_RANGES.items():
            value = getattr(self, name)
            if value is None and name in ("queue_limit", "deadline_ms", "retry_budget"):
                continue
            if not _is_number(value):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} = {value:g} is outside {low:g} to {high:g}")
        for name in ("queue_limit", "max_retries"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number, got {value!r}")

    @property
    def sheds(self) -> bool:
        """Whether anything is ever turned away: a queue limit or a deadline."""
        return self.queue_limit is not None or self.deadline_ms is not None


@dataclass(frozen=True)
class Station:
    """One queue: ``servers`` alike, each serving a request in ``service_ms`` (deterministic).

    With dynamic batching a slot serves up to ``max_batch`` requests in one call
    (``batch_service_ms[b]`` for a batch of ``b``); the analytic model then sees ``servers x
    max_batch`` servers of the full batch's time (``effective_servers``, ``effective_service_ms``),
    which is what the slots do once the queue is long.
    """

    servers: int
    service_ms: float
    queues: int = 1
    max_batch: int = 1
    batch_service_ms: tuple[float, ...] = ()

    @classmethod
    def of(cls, workload: Workload) -> Station:
        """The station a request of ``workload`` meets: one replica (the balancer spreads the
        rate over ``queues`` of them), or the fleet's one central queue."""
        batch = workload.effective_max_batch_size
        times = tuple(float(workload.batch_service_ms(b)) for b in range(batch + 1))
        if workload.is_central_queue:
            return cls(workload.servers, times[1], 1, batch, times)
        return cls(workload.slots_per_replica, times[1], workload.replicas, batch, times)

    @property
    def batched(self) -> bool:
        return self.max_batch > 1

    @property
    def effective_servers(self) -> int:
        return self.servers * self.max_batch

    @property
    def effective_service_ms(self) -> float:
        return self.batch_service_ms[self.max_batch] if self.batched else self.service_ms

    def batch_time_ms(self, batch: int) -> float:
        """A slot's time for a batch of ``batch`` (``service_ms`` unbatched)."""
        return self.batch_service_ms[batch] if self.batched else self.service_ms

    @property
    def capacity_rps(self) -> float:
        """Requests per second all the station's queues serve with every server busy."""
        return self.queues * self.effective_servers * 1000.0 / self.effective_service_ms
