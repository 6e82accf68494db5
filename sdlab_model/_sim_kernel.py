"""The simulator's compiled inner loop: one pass over arrivals, a heap of server free-times.

Imported lazily by ``sdlab_model.simulator`` so that ``import sdlab_model`` neither imports numba
nor compiles anything. With ``NUMBA_DISABLE_JIT=1`` the same functions run as plain Python and give
the same numbers to the bit (only IEEE ``+``, ``*``, ``min`` and ``max`` are used, no fastmath).

Why a recursion and not an event loop: with one FCFS queue, batches leave the queue in order, so
each batch's dispatch time follows from the earliest moment a server is free and the arrival times
alone. No event list is needed; the only state is the
free-times of the ``servers`` servers, kept as a binary min-heap in a numpy array.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def _compile(function):
    """``njit(cache=True)``, or plain ``njit`` where no cache directory is writable.

    numba looks for a cache directory at decoration time (beside the package, then the user-wide
    cache or ``NUMBA_CACHE_DIR``) and raises ``RuntimeError`` when none can be written, e.g. a
    read-only install with a read-only home. The code is the same either way; only the compile
    on first use in a fresh process is not saved.

    ``nogil``: the kernel touches only numpy arrays, so it runs without holding the GIL and a
    served app's other sessions keep running on the other cores while one simulates.
    """
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


def _replace_min(heap: np.ndarray, value: float) -> None:
    """Replace the smallest entry of a binary min-heap with ``value`` and restore heap order."""
    size = heap.shape[0]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        right = child + 1
        if right < size and heap[right] < heap[child]:
            child = right
        if heap[child] >= value:
            break
        heap[position] = heap[child]
        position = child
    heap[position] = value


replace_min = _compile(_replace_min)


def _run_batching_queue(
    arrival_ms: np.ndarray,
    servers: int,
    max_batch_size: int,
    batch_window_ms: float,
    service_by_size_ms: np.ndarray,
    service_multiplier: np.ndarray,
    dispatch_ms: np.ndarray,
    completion_ms: np.ndarray,
    batch_sizes: np.ndarray,
) -> int:
    """Serve sorted ``arrival_ms`` through one FCFS queue, ``servers`` servers, dynamic batching.

    The next batch starts at the first unserved request ``i``. It starts forming when a server is
    free and that request has arrived: ``start = max(a_i, earliest free time)``. It closes when
    the oldest has waited the window or the ``max_batch_size``-th request has arrived, whichever
    is first, but never before it started forming:
    ``dispatch = max(start, min(a_i + window, a_{i+B-1}))``. It takes every request that has
    arrived by then, up to ``B``. Without batching pass ``B = 1`` and window 0:
    ``dispatch = max(a_i, earliest free time)``, the M/D/c (Kiefer-Wolfowitz) recursion.

    Batches form one at a time, so a batch must not dispatch before the previous one; that holds
    without a check. If the previous batch left at the earliest free time, the next earliest free
    time is no sooner. Otherwise it left at ``a_{i-1}`` (it filled up) or at its oldest's window,
    and then it took every request that had arrived, so ``a_i`` is no earlier. The reference
    event-loop test in ``tests/sdlab_model/test_simulator.py`` checks the recursion.

    The batch runs ``service_by_size_ms[b]`` (times ``service_multiplier[k]`` for the ``k``-th
    batch when that array is not empty) on the earliest-free server. Fills ``dispatch_ms`` and
    ``completion_ms`` per request and ``batch_sizes`` per batch; returns the number of batches.
    """
    count = arrival_ms.shape[0]
    free_ms = np.zeros(servers)
    random_service = service_multiplier.shape[0] > 0
    first = 0
    batches = 0
    while first < count:
        oldest = arrival_ms[first]
        start = max(oldest, free_ms[0])
        close = oldest + batch_window_ms
        last = first + max_batch_size - 1
        if last < count and arrival_ms[last] < close:
            close = arrival_ms[last]
        dispatch = max(start, close)
        end = first + 1
        limit = min(count, first + max_batch_size)
        while end < limit and arrival_ms[end] <= dispatch:
            end += 1
        size = end - first
        service = service_by_size_ms[size]
        if random_service:
            service = service * service_multiplier[batches]
        done = dispatch + service
        for request in range(first, end):
            dispatch_ms[request] = dispatch
            completion_ms[request] = done
        batch_sizes[batches] = size
        batches += 1
        replace_min(free_ms, done)
        first = end
    return batches


run_batching_queue = _compile(_run_batching_queue)
