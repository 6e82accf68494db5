"""Compile the queueing model's kernels before a page needs them.

numba compiles a kernel on its first call, or loads it from its disk cache; ``warm_up`` makes
that first call, through the public functions, so that the types are theirs (the tail-constant
table, say, is a read-only array, a type of its own to numba). ``python3 dev.py run`` calls it
before the server starts, ``sdlab_ui.server.warmup`` in the background on a server's first
page.

Kept apart from the kernels, which import no other module of the model: this one imports the
modules that call them. ``python -m sdlab_model.queues.warmup`` runs ``warm_up``.
"""

from __future__ import annotations

import numpy as np

from sdlab_model.queues import batching, fleet, mdc, mdc_grid
from sdlab_model.workload import Workload


def warm_up() -> None:
    """Compile every kernel for the argument types the model passes (into the disk cache).

    ``fleet.batched_quantile`` compiles ``_fleet_kernel``'s loop (which calls ``_tail_kernel``'s
    kernels with its own arrays); ``mdc.MdcWait`` the exact M/D/c solve's and its wait
    quantiles' (``_mdc_kernel``).
    """
    cells = np.array([4.0, 32.0])
    mdc.decay_rate(cells, cells / 2.0)
    mdc_grid.log_tail_constant(cells, np.array([0.3, 0.9]))
    block = np.ones((2, 3))
    batching.mixture_quantile(block, block, block, block, block / 3.0, 0.01)
    batching.quantile_from_table(cells, cells, cells, cells, 0.01)
    fleet.batched_quantile(Workload(models_hosted=3), cells, cells / 4.0, 0.99)
    fleet.unbatched_quantile(Workload(dynamic_batching=False), cells, cells / 4.0, 0.99)
    mdc.MdcWait.solve(2, 1.0).wait_quantile(0.99)


if __name__ == "__main__":
    warm_up()
