"""The simulator's compiled inner loop: one pass over arrivals, a heap of server free-times.

Imported lazily by ``sdlab_model.simulation.simulator`` so that ``import sdlab_model`` neither
imports numba nor compiles anything. With ``NUMBA_DISABLE_JIT=1`` the same functions run as plain
Python and give the same numbers to the bit (only IEEE ``+``, ``*``, ``min`` and ``max`` are used,
no fastmath).

Why a recursion and not an event loop: with one FCFS queue, batches leave the queue in order, so
each batch's dispatch time follows from the earliest moment a server is free and the arrival times
alone. No event list is needed; the only state is the
free-times of the ``servers`` servers, kept as a binary min-heap in a numpy array.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sdlab_model.policies import Policy


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
    event-loop test in ``tests/sdlab_model/simulation/test_simulator.py`` checks the recursion.

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


POLICY_RANDOM = int(Policy.RANDOM)
POLICY_ROUND_ROBIN = int(Policy.ROUND_ROBIN)
POLICY_LEAST_REQUEST = int(Policy.LEAST_REQUEST)


def _heap_push(times, ranks, owners, payloads, size, time, rank, owner, payload):
    """Push an event onto a binary min-heap kept in four parallel arrays; returns the new size.

    Events are ordered by time, then by ``rank`` (smaller first), so equal times resolve the
    same way on every run and platform.
    """
    position = size
    while position > 0:
        parent = (position - 1) // 2
        if times[parent] < time or (times[parent] == time and ranks[parent] <= rank):
            break
        times[position] = times[parent]
        ranks[position] = ranks[parent]
        owners[position] = owners[parent]
        payloads[position] = payloads[parent]
        position = parent
    times[position] = time
    ranks[position] = rank
    owners[position] = owner
    payloads[position] = payload
    return size + 1


def _heap_pop(times, ranks, owners, payloads, size):
    """Remove the first event (the caller read it at index 0 first); returns the new size."""
    size -= 1
    if size == 0:
        return 0
    time = times[size]
    rank = ranks[size]
    owner = owners[size]
    payload = payloads[size]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        right = child + 1
        if right < size and (
            times[right] < times[child]
            or (times[right] == times[child] and ranks[right] < ranks[child])
        ):
            child = right
        if times[child] > time or (times[child] == time and ranks[child] >= rank):
            break
        times[position] = times[child]
        ranks[position] = ranks[child]
        owners[position] = owners[child]
        payloads[position] = payloads[child]
        position = child
    times[position] = time
    ranks[position] = rank
    owners[position] = owner
    payloads[position] = payload
    return size


heap_push = _compile(_heap_push)
heap_pop = _compile(_heap_pop)


def _ready_before(ready_ms, ready_model, head, base, i, time, model):
    """Whether heap entry ``i`` comes before ``(time, model)``: earlier ready time, then (on a
    tie) the older oldest request, so equal times still go first come, first served."""
    if ready_ms[base + i] != time:
        return ready_ms[base + i] < time
    return head[base + ready_model[base + i]] < head[base + model]


def _ready_push(ready_ms, ready_model, head, base, size, time, model):
    """Push ``model`` ready since ``time`` on the min-heap at ``[base, base + size)``."""
    position = size
    while position > 0:
        parent = (position - 1) // 2
        if ready_before(ready_ms, ready_model, head, base, parent, time, model):
            break
        ready_ms[base + position] = ready_ms[base + parent]
        ready_model[base + position] = ready_model[base + parent]
        position = parent
    ready_ms[base + position] = time
    ready_model[base + position] = model


def _ready_pop(ready_ms, ready_model, head, base, size):
    """Remove and return the model ready longest from the heap at ``[base, base + size)``."""
    first = ready_model[base]
    size -= 1
    time = ready_ms[base + size]
    model = ready_model[base + size]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        right = child + 1
        if right < size and ready_before(
            ready_ms,
            ready_model,
            head,
            base,
            right,
            ready_ms[base + child],
            ready_model[base + child],
        ):
            child = right
        if not ready_before(ready_ms, ready_model, head, base, child, time, model):
            break
        ready_ms[base + position] = ready_ms[base + child]
        ready_model[base + position] = ready_model[base + child]
        position = child
    if size > 0:
        ready_ms[base + position] = time
        ready_model[base + position] = model
    return first


ready_before = _compile(_ready_before)
ready_push = _compile(_ready_push)
ready_pop = _compile(_ready_pop)


def _run_fleet(
    arrival_ms: np.ndarray,
    model_of: np.ndarray,
    first_choice: np.ndarray,
    second_choice: np.ndarray,
    policy: int,
    replicas: int,
    slots_per_replica: int,
    models: int,
    max_batch_size: int,
    batch_window_ms: float,
    service_by_size_ms: np.ndarray,
    service_multiplier: np.ndarray,
    dispatch_ms: np.ndarray,
    completion_ms: np.ndarray,
    batch_sizes: np.ndarray,
    batch_first: np.ndarray,
    model_size_gb: np.ndarray,
    load_ms: np.ndarray,
    pinned: np.ndarray,
    cache_gb: float,
    batch_load_ms: np.ndarray,
    holder_replicas: np.ndarray,
    holder_start: np.ndarray,
) -> int:
    """Serve sorted arrivals through a load balancer and per-replica, per-model batchers.

    The system is ``sdlab_model.workload``'s: request ``i`` is for model ``model_of[i]``; the
    balancer sends it to replica ``i mod replicas`` (round robin), ``first_choice[i]`` (random) or
    the one of ``first_choice[i]``, ``second_choice[i]`` holding fewer unfinished requests (least
    request; the first on a tie). At the replica it joins its model's queue. A model's queue is
    *ready* when its oldest request has waited ``batch_window_ms`` or ``max_batch_size`` requests
    wait. A ready queue dispatches at once if the replica has a free slot, else it waits for one;
    as slots free up, waiting queues take them in the order they became ready (so without
    batching a replica serves its requests first come, first served, whatever their model). A
    dispatch takes up to ``max_batch_size`` of the queue's requests (all have arrived: events run
    in time order), and runs ``service_by_size_ms[b]`` (times ``service_multiplier[i]``, ``i``
    the batch's oldest request, when that array is not empty). Events at the same time run
    window expiries (oldest head first), then completions, then arrivals: an arrival sees every
    slot freed at its own instant, and a freed slot sees every queue ready by then.

    Model residency, when ``model_size_gb`` is not empty: each replica keeps the models it has
    loaded in ``cache_gb`` of memory, least recently dispatched first out (``pinned`` models are
    never evicted). A batch of a model that is not resident loads it first, on the slot it took:
    the slot is busy ``load_ms[model]`` longer, and a batch of the same model dispatched on
    another slot while the load runs waits on its slot until the load is done. A model is marked
    used when a batch of it is dispatched. Every replica starts warm: pinned models, then the
    most popular (lowest index) that fit. ``batch_load_ms`` gets each batch's wait for a load (0
    on a hit). Without residency the arithmetic is exactly the plain kernel's.

    Model-aware routing, when ``holder_replicas`` is not empty: model ``m`` is held by the
    replicas ``holder_replicas[holder_start[m]:holder_start[m + 1]]`` and the balancer picks
    among those only: the ``first_choice[i]``-th holder (random), the holders in turn, one
    counter per model (round robin), or the one of the ``first_choice[i]``-th and
    ``second_choice[i]``-th holders with fewer unfinished requests (least request). With
    residency each replica then starts warm with the models it holds (in index order, while
    they fit) instead of the most popular ones.

    Fills ``dispatch_ms`` and ``completion_ms`` per request, and ``batch_sizes`` and
    ``batch_first`` (its oldest request) per batch, in dispatch order; returns the number of
    batches.
    """
    count = arrival_ms.shape[0]
    queues = replicas * models
    # Per (replica, model) FIFO of waiting requests, linked through next_waiting.
    next_waiting = np.empty(count, dtype=np.int64)
    head = np.full(queues, -1, dtype=np.int64)
    tail = np.full(queues, -1, dtype=np.int64)
    waiting = np.zeros(queues, dtype=np.int64)
    is_ready = np.zeros(queues, dtype=np.bool_)
    window_pending = np.zeros(queues, dtype=np.bool_)
    # Per replica: free slots, unfinished requests, and a heap of ready queues (models) by the
    # time they became ready, at [replica * models, (replica + 1) * models).
    free_slots = np.full(replicas, slots_per_replica, dtype=np.int64)
    unfinished = np.zeros(replicas, dtype=np.int64)
    ready_ms = np.empty(queues)
    ready_model = np.empty(queues, dtype=np.int64)
    ready_count = np.zeros(replicas, dtype=np.int64)
    # Events: at most one window expiry per queue (a queue whose head left in a full batch keeps
    # its pending expiry, which re-arms for the new head when it comes up) plus one completion
    # per busy slot. At equal times window expiries come first, oldest head first (rank = that
    # request's index), then completions (rank count): so when a slot frees, every queue ready
    # by then competes for it.
    capacity = queues + replicas * slots_per_replica + 1
    event_ms = np.empty(capacity)
    event_rank = np.empty(capacity, dtype=np.int64)
    event_replica = np.empty(capacity, dtype=np.int64)
    event_payload = np.empty(capacity, dtype=np.int64)
    events = 0
    random_service = service_multiplier.shape[0] > 0
    # Residency: per (replica, model) whether resident, when last used and when its load ends.
    residency = model_size_gb.shape[0] > 0
    cached = replicas * models if residency else 0
    resident = np.zeros(cached, dtype=np.bool_)
    last_used = np.zeros(cached, dtype=np.int64)
    loaded_at_ms = np.zeros(cached)
    used_gb = np.zeros(replicas)
    stamp = 0
    routed = holder_replicas.shape[0] > 0
    turn = np.zeros(models if routed else 0, dtype=np.int64)
    if residency and routed:
        warm_held(
            resident, last_used, used_gb, model_size_gb, cache_gb, holder_replicas, holder_start
        )
    elif residency:
        for replica in range(replicas):
            used_gb[replica] = warm_cache(
                resident, last_used, model_size_gb, pinned, cache_gb, replica * models, models
            )
    batches = 0
    next_arrival = 0
    while next_arrival < count or events > 0:
        if events > 0 and (next_arrival >= count or event_ms[0] <= arrival_ms[next_arrival]):
            now = event_ms[0]
            rank = event_rank[0]
            replica = event_replica[0]
            payload = event_payload[0]
            events = heap_pop(event_ms, event_rank, event_replica, event_payload, events)
            if rank >= count:  # a batch completed: payload is its size
                free_slots[replica] += 1
                unfinished[replica] -= payload
                if ready_count[replica] == 0:
                    continue
                model = ready_pop(
                    ready_ms, ready_model, head, replica * models, ready_count[replica]
                )
                ready_count[replica] -= 1
            else:  # a window expiry for queue ``payload``
                queue = payload
                window_pending[queue] = False
                if waiting[queue] == 0 or is_ready[queue]:
                    continue
                deadline = arrival_ms[head[queue]] + batch_window_ms
                if deadline > now:  # the head it was for has left; arm it for the new head
                    events = heap_push(
                        event_ms,
                        event_rank,
                        event_replica,
                        event_payload,
                        events,
                        deadline,
                        head[queue],
                        replica,
                        queue,
                    )
                    window_pending[queue] = True
                    continue
                model = queue - replica * models
                is_ready[queue] = True
                if free_slots[replica] == 0:
                    ready_push(
                        ready_ms,
                        ready_model,
                        head,
                        replica * models,
                        ready_count[replica],
                        now,
                        model,
                    )
                    ready_count[replica] += 1
                    continue
        else:
            now = arrival_ms[next_arrival]
            request = next_arrival
            next_arrival += 1
            if routed:
                replica = holder_of(
                    holder_replicas,
                    holder_start,
                    turn,
                    unfinished,
                    policy,
                    model_of[request],
                    first_choice[request],
                    second_choice[request],
                )
            elif policy == POLICY_ROUND_ROBIN:
                replica = request % replicas
            elif policy == POLICY_LEAST_REQUEST:
                replica = first_choice[request]
                other = second_choice[request]
                if unfinished[other] < unfinished[replica]:
                    replica = other
            else:
                replica = first_choice[request]
            unfinished[replica] += 1
            model = model_of[request]
            queue = replica * models + model
            next_waiting[request] = -1
            if waiting[queue] == 0:
                head[queue] = request
            else:
                next_waiting[tail[queue]] = request
            tail[queue] = request
            waiting[queue] += 1
            if is_ready[queue]:
                continue
            if waiting[queue] < max_batch_size and not (
                waiting[queue] == 1 and batch_window_ms <= 0.0
            ):
                if waiting[queue] == 1 and not window_pending[queue]:
                    events = heap_push(
                        event_ms,
                        event_rank,
                        event_replica,
                        event_payload,
                        events,
                        now + batch_window_ms,
                        request,
                        replica,
                        queue,
                    )
                    window_pending[queue] = True
                continue
            is_ready[queue] = True
            if free_slots[replica] == 0:
                ready_push(
                    ready_ms, ready_model, head, replica * models, ready_count[replica], now, model
                )
                ready_count[replica] += 1
                continue
        # Dispatch the ready queue (replica, model) on a free slot, then re-arm it.
        queue = replica * models + model
        while True:
            size = min(waiting[queue], max_batch_size)
            request = head[queue]
            service = service_by_size_ms[size]
            if random_service:  # drawn per batch's oldest request: independent of event order
                service = service * service_multiplier[request]
            start = now
            if residency:
                cache = replica * models + model
                if not resident[cache]:
                    used_gb[replica] = lru_admit(
                        resident,
                        last_used,
                        used_gb[replica],
                        model_size_gb,
                        pinned,
                        cache_gb,
                        replica * models,
                        models,
                        model,
                    )
                    loaded_at_ms[cache] = now + load_ms[model]
                stamp += 1
                last_used[cache] = stamp
                if loaded_at_ms[cache] > now:
                    start = loaded_at_ms[cache]
                batch_load_ms[batches] = start - now
            done = start + service
            batch_first[batches] = request
            for _ in range(size):
                dispatch_ms[request] = now
                completion_ms[request] = done
                request = next_waiting[request]
            head[queue] = request
            waiting[queue] -= size
            batch_sizes[batches] = size
            batches += 1
            free_slots[replica] -= 1
            events = heap_push(
                event_ms,
                event_rank,
                event_replica,
                event_payload,
                events,
                done,
                count,
                replica,
                size,
            )
            is_ready[queue] = False
            if waiting[queue] == 0:
                break
            expires = arrival_ms[head[queue]] + batch_window_ms
            if waiting[queue] < max_batch_size and expires > now:
                if not window_pending[queue]:
                    events = heap_push(
                        event_ms,
                        event_rank,
                        event_replica,
                        event_payload,
                        events,
                        expires,
                        head[queue],
                        replica,
                        queue,
                    )
                    window_pending[queue] = True
                break
            # Ready already: its window ran out, or its B-th request came, while it waited.
            since = expires
            if waiting[queue] >= max_batch_size:
                request = head[queue]
                for _ in range(max_batch_size - 1):
                    request = next_waiting[request]
                since = min(since, arrival_ms[request])
            is_ready[queue] = True
            if free_slots[replica] == 0:
                ready_push(
                    ready_ms,
                    ready_model,
                    head,
                    replica * models,
                    ready_count[replica],
                    since,
                    model,
                )
                ready_count[replica] += 1
                break
    return batches


run_fleet = _compile(_run_fleet)


def _holder_of(holder_replicas, holder_start, turn, unfinished, policy, model, first, second):
    """The replica a request for ``model`` goes to, among the model's holders (``run_fleet``)."""
    start = holder_start[model]
    count = holder_start[model + 1] - start
    if policy == POLICY_ROUND_ROBIN:
        pick = holder_replicas[start + turn[model] % count]
        turn[model] += 1
        return pick
    pick = holder_replicas[start + first]
    if policy == POLICY_LEAST_REQUEST:
        other = holder_replicas[start + second]
        if unfinished[other] < unfinished[pick]:
            pick = other
    return pick


def _warm_held(resident, last_used, used_gb, model_size_gb, cache_gb, holder_replicas, start):
    """Fill empty caches with the models each replica holds, in index order while they fit."""
    models = model_size_gb.shape[0]
    for model in range(models):
        for index in range(start[model], start[model + 1]):
            replica = holder_replicas[index]
            if used_gb[replica] + model_size_gb[model] <= cache_gb * (1.0 + _CAPACITY_SLACK):
                resident[replica * models + model] = True
                last_used[replica * models + model] = -1 - model
                used_gb[replica] += model_size_gb[model]


_CAPACITY_SLACK = 1e-9
"""Relative slack on a cache's capacity, so sizes that add up to it exactly in decimal fit."""


def _lru_admit(
    resident, last_used, used_gb, model_size_gb, pinned, cache_gb, base, models, model
) -> float:
    """Load ``model`` into the LRU cache of models at ``[base, base + models)``.

    Evicts unpinned resident models, least recently used first, until it fits (or none is left
    to evict), marks it resident and returns the memory now held.
    """
    used = used_gb + model_size_gb[model]
    while used > cache_gb * (1.0 + _CAPACITY_SLACK):
        victim = -1
        oldest = 0
        for other in range(models):
            evictable = resident[base + other] and not pinned[other] and other != model
            if evictable and (victim < 0 or last_used[base + other] < oldest):
                victim = other
                oldest = last_used[base + other]
        if victim < 0:
            break
        resident[base + victim] = False
        used -= model_size_gb[victim]
    resident[base + model] = True
    return used


def _warm_cache(resident, last_used, model_size_gb, pinned, cache_gb, base, models) -> float:
    """Fill an empty cache: every pinned model, then the others in index order while they fit.

    More popular models (lower index) get more recent use stamps (all negative, before any
    real use). Returns the memory held.
    """
    used = 0.0
    for model in range(models):
        if pinned[model]:
            resident[base + model] = True
            last_used[base + model] = -1 - model
            used += model_size_gb[model]
    for model in range(models):
        if pinned[model] or resident[base + model]:
            continue
        if used + model_size_gb[model] <= cache_gb * (1.0 + _CAPACITY_SLACK):
            resident[base + model] = True
            last_used[base + model] = -1 - model
            used += model_size_gb[model]
    return used


def _run_lru(
    model_of: np.ndarray, model_size_gb: np.ndarray, cache_gb: float, hits: np.ndarray
) -> int:
    """One LRU cache of models fed the reference stream ``model_of``; fills ``hits`` (1 on a hit).

    Starts warm like ``run_fleet``'s caches. Returns the number of hits.
    """
    models = model_size_gb.shape[0]
    resident = np.zeros(models, dtype=np.bool_)
    last_used = np.zeros(models, dtype=np.int64)
    pinned = np.zeros(models, dtype=np.bool_)
    used = warm_cache(resident, last_used, model_size_gb, pinned, cache_gb, 0, models)
    total = 0
    for index in range(model_of.shape[0]):
        model = model_of[index]
        if resident[model]:
            hits[index] = 1
            total += 1
        else:
            hits[index] = 0
            used = lru_admit(
                resident, last_used, used, model_size_gb, pinned, cache_gb, 0, models, model
            )
        last_used[model] = index
    return total


holder_of = _compile(_holder_of)
warm_held = _compile(_warm_held)
lru_admit = _compile(_lru_admit)
warm_cache = _compile(_warm_cache)
run_lru = _compile(_run_lru)
