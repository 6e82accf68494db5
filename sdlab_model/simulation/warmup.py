"""Compile the event simulator's kernels before a page needs them.

Like ``sdlab_model.queues.warmup``: the first call of a kernel compiles it (seconds) or loads it
from numba's disk cache. The Lab's judgement simulates designs near saturation in the server's
own process, where a compile would hold the interpreter lock, and every visitor with it, for
seconds. ``python -m sdlab_model.simulation.warmup`` runs ``warm_up``.
"""

from __future__ import annotations

from sdlab_model.simulation.simulator import simulate
from sdlab_model.workload import Workload

# One per kernel the judgement runs: a fleet behind a per-replica balancer, an unbatched fleet,
# and the central queue (one batching queue over every replica).
VARIANTS = ({}, {"dynamic_batching": False}, {"lb_policy": "central_queue"})


def warm_up() -> None:
    """Compile the simulator's kernels for the argument types the model passes."""
    for changes in VARIANTS:
        simulate(Workload(**changes), n_requests=2000)


if __name__ == "__main__":
    warm_up()
