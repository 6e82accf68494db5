"""Queues: the analytic queueing model of the serving fleet.

- ``erlang``, ``mdc``, ``mdc_grid``: one station — Erlang C, the exact M/D/c solve and its
  tail-constant table (data in ``queues/data``).
- ``batching``: dynamic batching (batch formation feeding a queue of batches).
- ``fleet``: the fleet as deployed, one replica at a time behind a load balancer.
- ``queueing``: the entry point, ``latency(workload)`` and ``p99_grid``, choosing between them.
"""

from sdlab_model.queues.queueing import latency, p99_grid

__all__ = ["latency", "p99_grid"]
