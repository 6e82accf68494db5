"""Compile the LLM model's numba kernels before a page needs them.

Like ``sdlab_model.queues.warmup``: the first call of a kernel compiles it (seconds) or loads it
from numba's disk cache; ``warm_up`` makes those first calls through the public functions, so
the argument types are theirs. ``python -m sdlab_model.llm.warmup`` runs it.
"""

from __future__ import annotations

from sdlab_model.llm.analytic import llm_latency
from sdlab_model.llm.simulator import simulate_llm
from sdlab_model.llm.workload import LlmWorkload


def warm_up() -> None:
    """Compile the analytic model's solve and quantile searches and the simulator's engine."""
    workload = LlmWorkload(rate_rps=1.0)
    llm_latency(workload)
    simulate_llm(workload, requests=200, max_requests=200)


if __name__ == "__main__":
    warm_up()
