"""The priority simulator's compiled loop: strict non-preemptive priority on ``c`` servers.

Imported lazily by ``sdlab_model.overload.priorities`` so that ``import sdlab_model`` neither
imports numba nor compiles anything. With ``NUMBA_DISABLE_JIT=1`` the same function runs as plain
Python and gives the same numbers (only IEEE ``+``, ``max`` and comparisons are used).

Why a recursion and not an event list: every server takes the same deterministic time, so the
next start in the whole system is at the earliest moment a server is free and someone is there,
``start = max(earliest free time, earliest unserved arrival)``; who starts is the highest class
with an unserved request that has arrived by then (the oldest of that class). A server idle
before ``start`` is interchangeable with any other, so the one free earliest takes it. The only
state is the servers' free times (a binary min-heap) and one pointer per class into its arrivals.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sdlab_model.simulation._sim_kernel import replace_min


def _compile(function):
    """``njit(cache=True, nogil=True)``, or without the disk cache where none is writable."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


def _run_priority_queue(
    arrival_ms: np.ndarray,
    class_start: np.ndarray,
    servers: int,
    service_ms: float,
    start_ms: np.ndarray,
) -> None:
    """Fill ``start_ms`` with each request's start of service.

    ``arrival_ms`` holds every class's arrivals, class by class (0 the highest priority), each
    class's run sorted; class ``k`` is ``arrival_ms[class_start[k]:class_start[k + 1]]``.
    """
    classes = class_start.shape[0] - 1
    heap = np.zeros(servers)
    head = class_start[:-1].copy()
    remaining = arrival_ms.shape[0]
    while remaining > 0:
        earliest = np.inf
        for k in range(classes):
            if head[k] < class_start[k + 1] and arrival_ms[head[k]] < earliest:
                earliest = arrival_ms[head[k]]
        start = max(heap[0], earliest)
        for k in range(classes):
            if head[k] < class_start[k + 1] and arrival_ms[head[k]] <= start:
                start_ms[head[k]] = start
                head[k] += 1
                break
        replace_min(heap, start + service_ms)
        remaining -= 1


run_priority_queue = _compile(_run_priority_queue)
