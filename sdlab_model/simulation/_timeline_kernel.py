"""The timeline check's compiled loop: one FCFS queue whose number of servers changes over time.

Imported lazily by ``sdlab_model.timeline.check``. The system: requests arrive at given times and
are served first come, first served, each for a fixed ``service_s`` on one server; the number
of servers is piecewise constant (``segment_servers[j]`` from ``segment_start_s[j]`` on). A
server added serves from the moment it is added; a server removed while busy finishes its
request (a graceful drain).

Why one pass suffices: with FCFS the requests start in arrival order, so each one starts at the
earliest moment at or after its arrival and after the previous request started at which some
existing server is free; the state is the free time of each server.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def _compile(function):
    """``njit(cache=True, nogil=True)``, or without the disk cache where none is writable."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


def _sift_down(heap, size, position):
    value = heap[position]
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= value:
            break
        heap[position] = heap[child]
        position = child
    heap[position] = value


sift_down = _compile(_sift_down)


def _push(heap, size, value):
    """Add ``value`` to a binary min-heap of ``size`` entries; returns the new size."""
    position = size
    while position > 0:
        parent = (position - 1) // 2
        if heap[parent] <= value:
            break
        heap[position] = heap[parent]
        position = parent
    heap[position] = value
    return size + 1


push = _compile(_push)


def _pop(heap, size):
    """Remove the smallest entry of a binary min-heap; returns the new size."""
    size -= 1
    if size > 0:
        heap[0] = heap[size]
        sift_down(heap, size, 0)
    return size


pop = _compile(_pop)


def _serve(arrival_s, service_s, segment_start_s, segment_servers):
    """Start time of every request (same order as ``arrival_s``, which must be sorted).

    The servers in place are a min-heap of the times they come free. At a change of count the
    heap gains servers free from that moment, or loses the ones free soonest (a removed busy
    server finishes its request; which servers go changes no start time while they are idle,
    the usual case when a fleet shrinks).
    """
    segments = segment_start_s.shape[0]
    most = int(segment_servers.max())
    heap = np.empty(max(1, most))
    size = 0
    for _ in range(segment_servers[0]):
        size = push(heap, size, segment_start_s[0])
    segment = 0
    start = np.empty(arrival_s.shape[0])
    last_start = segment_start_s[0]
    for i in range(arrival_s.shape[0]):
        now = max(arrival_s[i], last_start)
        while True:
            while segment + 1 < segments and segment_start_s[segment + 1] <= now:
                segment += 1
                change = segment_servers[segment] - segment_servers[segment - 1]
                for _ in range(max(0, change)):
                    size = push(heap, size, segment_start_s[segment])
                for _ in range(max(0, -change)):
                    size = pop(heap, size)
            candidate = max(now, heap[0]) if size > 0 else np.inf
            boundary = segment_start_s[segment + 1] if segment + 1 < segments else np.inf
            if candidate < boundary:
                break
            if boundary == np.inf:  # no server ever again
                break
            now = boundary
        start[i] = candidate
        if candidate < np.inf:
            heap[0] = candidate + service_s
            sift_down(heap, size, 0)
            last_start = candidate
    return start


serve = _compile(_serve)
