"""The timeline check's compiled loops: FCFS queues whose number of servers changes over time.

Imported lazily by ``sdlab_model.timeline.check``. Requests arrive at given times; the fleet's
size is piecewise constant (``segment_servers[j]`` or ``segment_replicas[j]`` from
``segment_start_s[j]`` on). A server added serves from the moment it is added; a server removed
while busy finishes its work (a graceful drain).

- ``serve``: one pooled queue, unbatched, each request for a fixed time on one server (the
  central queue; the first round's kernel, kept as the reference the batched one must equal).
- ``serve_batches``: one pooled queue with dynamic batching (the simulator's batching recursion,
  ``_sim_kernel.run_batching_queue``, with the server count of the moment).
- ``route`` and ``serve_lives``: a load balancer (round robin or random) over the replicas of
  the moment, each replica its own batching queue on its slots.
- ``serve_queue_until``, ``route_until`` and ``serve_lives_until``: the same, resumable, so the
  check can draw and serve its requests a chunk at a time (their state in the caller's arrays).

Why one pass suffices: with FCFS the batches of one queue leave in arrival order, so each one
starts at the earliest moment at or after its oldest request's arrival and the previous start
at which some existing server is free; the state is the free time of each server.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sdlab_model.policies import Policy

POLICY_ROUND_ROBIN = int(Policy.ROUND_ROBIN)
"""``route``'s code for round robin; any other code routes at random."""


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


def _serve_queue_until(
    arrival_s,
    max_batch_size,
    window_s,
    service_by_size_s,
    segment_start_s,
    segment_servers,
    heap,
    counters,
    clock_s,
    horizon_s,
    dispatch_s,
    completion_s,
):
    """``serve_batches`` that can stop and resume: serves sorted ``arrival_s`` until the next
    batch depends on arrivals at or after ``horizon_s`` (not drawn yet); returns how many
    requests it served (FCFS serves a prefix). The queue's state lives in the caller's arrays:
    ``heap`` (free times), ``counters`` (servers in place, segment) and ``clock_s`` (last
    dispatch, and how far the next batch's dispatch search has moved, ``-inf`` if not at all).

    A batch is settled when its ``B``-th request is drawn (its close and members are known) or
    when it dispatches before the horizon (every later arrival is at or after it, so neither
    its close nor its members change). Crossing a change of server count before the horizon is
    settled too: the close it was compared with is at least ``min(oldest + window, horizon)``.
    The unserved requests go again, first, in the next call.
    """
    count = arrival_s.shape[0]
    segments = segment_start_s.shape[0]
    size = counters[0]
    segment = counters[1]
    last_dispatch = clock_s[0]
    first = 0
    while first < count:
        oldest = arrival_s[first]
        close = oldest + window_s
        last = first + max_batch_size - 1
        drawn = last < count
        if drawn and arrival_s[last] < close:
            close = arrival_s[last]
        now = max(max(oldest, last_dispatch), clock_s[1])
        settled = drawn
        while True:
            while segment + 1 < segments and segment_start_s[segment + 1] <= now:
                segment += 1
                change = segment_servers[segment] - segment_servers[segment - 1]
                for _ in range(max(0, change)):
                    size = push(heap, size, segment_start_s[segment])
                for _ in range(max(0, -change)):
                    size = pop(heap, size)
            free = heap[0] if size > 0 else np.inf
            dispatch = max(max(now, free), close)
            boundary = segment_start_s[segment + 1] if segment + 1 < segments else np.inf
            if dispatch < boundary or boundary == np.inf:
                settled = settled or dispatch < horizon_s or dispatch == np.inf
                break
            if not drawn and boundary >= horizon_s:
                break
            now = boundary
        if not settled:
            clock_s[1] = now
            break
        clock_s[1] = -np.inf
        if dispatch == np.inf:  # no server ever again
            for request in range(first, count):
                dispatch_s[request] = np.inf
                completion_s[request] = np.inf
            first = count
            break
        end = first + 1
        limit = min(count, first + max_batch_size)
        while end < limit and arrival_s[end] <= dispatch:
            end += 1
        done = dispatch + service_by_size_s[end - first]
        for request in range(first, end):
            dispatch_s[request] = dispatch
            completion_s[request] = done
        heap[0] = done
        sift_down(heap, size, 0)
        last_dispatch = dispatch
        first = end
    counters[0] = size
    counters[1] = segment
    clock_s[0] = last_dispatch
    return first


serve_queue_until = _compile(_serve_queue_until)


def _start_queue(segment_start_s, segment_servers):
    """A resumable queue's state at its start: ``(heap, counters, clock_s)``."""
    heap = np.empty(max(1, int(segment_servers.max())))
    size = 0
    for _ in range(segment_servers[0]):
        size = push(heap, size, segment_start_s[0])
    counters = np.array([size, 0], np.int64)
    clock_s = np.array([segment_start_s[0], -np.inf])
    return heap, counters, clock_s


start_queue = _compile(_start_queue)


def _serve_batches(
    arrival_s,
    max_batch_size,
    window_s,
    service_by_size_s,
    segment_start_s,
    segment_servers,
    dispatch_s,
    completion_s,
):
    """Serve sorted ``arrival_s`` through one FCFS queue with dynamic batching on a changing
    number of servers; fills ``dispatch_s`` and ``completion_s`` per request (``inf`` for a
    request no server ever takes).

    The simulator's batching recursion (``_sim_kernel.run_batching_queue``) with the server
    count of the moment: the next batch starts at the first unserved request; it dispatches at
    ``max(its oldest's arrival, the previous dispatch, the earliest free server, close)`` where
    ``close = min(oldest + window, arrival of the B-th)``, and takes every request arrived by then,
    up to ``B``. If that moment falls at or after a change of server count, the count changes
    first and the moment is found again from the change on (a server added is free from then;
    a removal takes the servers free soonest, a busy one finishing its batch). Without batching
    (``B = 1``, window 0) this is ``serve``, start for start. (``serve_queue_until`` in one
    call with every arrival drawn.)
    """
    heap, counters, clock_s = start_queue(segment_start_s, segment_servers)
    serve_queue_until(
        arrival_s,
        max_batch_size,
        window_s,
        service_by_size_s,
        segment_start_s,
        segment_servers,
        heap,
        counters,
        clock_s,
        np.inf,
        dispatch_s,
        completion_s,
    )


serve_batches = _compile(_serve_batches)


def _route(arrival_s, segment_start_s, segment_replicas, policy, uniform, life_of, life_start_s):
    """Send each arrival to a replica of the moment; returns how many replica lives there were.

    Replicas are numbered ``0 .. R(t) - 1``; a scale-down removes the highest numbers (the
    newest, as the timeline removes its newest cohorts), and a number added again is a new
    replica: a *life*, with its own queue from ``life_start_s``. Round robin (``policy``
    ``Policy.ROUND_ROBIN``) sends the ``n``-th request to replica ``n mod R(t)``; random (any
    other code) to ``floor(u_n R(t))``.
    ``life_of`` gets each request's life (-1 when no replica exists). (``route_until`` in one
    call.)
    """
    alive, counters = start_routing(segment_start_s, segment_replicas, life_start_s)
    route_until(
        arrival_s,
        segment_start_s,
        segment_replicas,
        policy,
        uniform,
        0,
        alive,
        counters,
        life_start_s,
        life_of,
    )
    return counters[1]


def _start_routing(segment_start_s, segment_replicas, life_start_s):
    """The balancer's state at the start: ``(alive, counters)``, the life of each replica
    number and ``[segment, lives so far]``; the first replicas' lives start in
    ``life_start_s``."""
    alive = np.empty(max(1, int(segment_replicas.max())), np.int64)
    for replica in range(segment_replicas[0]):
        alive[replica] = replica
        life_start_s[replica] = segment_start_s[0]
    return alive, np.array([0, segment_replicas[0]], np.int64)


start_routing = _compile(_start_routing)


def _route_until(
    arrival_s,
    segment_start_s,
    segment_replicas,
    policy,
    uniform,
    offset,
    alive,
    counters,
    life_start_s,
    life_of,
):
    """``route`` resumable: ``arrival_s`` are the requests numbered ``offset`` on (round robin
    counts from the first request ever); the balancer's state is ``alive`` and ``counters``."""
    segments = segment_start_s.shape[0]
    segment = counters[0]
    lives = counters[1]
    for i in range(arrival_s.shape[0]):
        while segment + 1 < segments and segment_start_s[segment + 1] <= arrival_s[i]:
            segment += 1
            for replica in range(segment_replicas[segment - 1], segment_replicas[segment]):
                alive[replica] = lives
                life_start_s[lives] = segment_start_s[segment]
                lives += 1
        replicas = segment_replicas[segment]
        if replicas == 0:
            life_of[i] = -1
        elif policy == POLICY_ROUND_ROBIN:
            life_of[i] = alive[(offset + i) % replicas]
        else:
            life_of[i] = alive[min(replicas - 1, int(uniform[i] * replicas))]
    counters[0] = segment
    counters[1] = lives


route_until = _compile(_route_until)


def _serve_lives_until(
    arrival_s,
    life_of,
    life_start_s,
    slots,
    max_batch_size,
    window_s,
    service_by_size_s,
    heaps,
    clocks_s,
    horizon_s,
    dispatch_s,
    completion_s,
    served,
):
    """``serve_lives`` resumable: each life's queue serves its requests (sorted by arrival)
    until its next batch depends on arrivals not drawn yet (``serve_queue_until``); ``served``
    marks the requests done. A life's queue state is its row of ``heaps`` (free time of each
    slot) and of ``clocks_s``; a new life's row must be filled with its start first."""
    order = np.argsort(life_of, kind="mergesort")  # stable: arrival order within a life
    count = arrival_s.shape[0]
    position = 0
    while position < count and life_of[order[position]] < 0:
        dispatch_s[order[position]] = np.inf
        completion_s[order[position]] = np.inf
        served[order[position]] = True
        position += 1
    servers = np.array([slots], np.int64)
    start = np.empty(1)
    counters = np.array([slots, 0], np.int64)
    while position < count:
        life = life_of[order[position]]
        end = position
        while end < count and life_of[order[end]] == life:
            end += 1
        chosen = order[position:end]
        start[0] = life_start_s[life]
        dispatch = np.empty(end - position)
        completion = np.empty(end - position)
        counters[0] = slots
        counters[1] = 0
        done = serve_queue_until(
            arrival_s[chosen],
            max_batch_size,
            window_s,
            service_by_size_s,
            start,
            servers,
            heaps[life],
            counters,
            clocks_s[life],
            horizon_s,
            dispatch,
            completion,
        )
        for k in range(done):
            dispatch_s[chosen[k]] = dispatch[k]
            completion_s[chosen[k]] = completion[k]
            served[chosen[k]] = True
        position = end


serve_lives_until = _compile(_serve_lives_until)


route = _compile(_route)


def _serve_lives(
    arrival_s,
    life_of,
    life_start_s,
    slots,
    max_batch_size,
    window_s,
    service_by_size_s,
    dispatch_s,
    completion_s,
):
    """Each replica life serves the requests routed to it on its own ``slots`` servers (its own
    batching queue, ``serve_batches``), from its start until its queue is empty: a replica taken
    out of the balancer finishes what it holds (a graceful drain)."""
    order = np.argsort(life_of, kind="mergesort")  # stable: arrival order within a life
    count = arrival_s.shape[0]
    position = 0
    while position < count and life_of[order[position]] < 0:
        dispatch_s[order[position]] = np.inf
        completion_s[order[position]] = np.inf
        position += 1
    servers = np.array([slots], np.int64)
    start = np.empty(1)
    while position < count:
        life = life_of[order[position]]
        end = position
        while end < count and life_of[order[end]] == life:
            end += 1
        chosen = order[position:end]
        start[0] = life_start_s[life]
        dispatch = np.empty(end - position)
        completion = np.empty(end - position)
        serve_batches(
            arrival_s[chosen],
            max_batch_size,
            window_s,
            service_by_size_s,
            start,
            servers,
            dispatch,
            completion,
        )
        dispatch_s[chosen] = dispatch
        completion_s[chosen] = completion
        position = end


serve_lives = _compile(_serve_lives)
