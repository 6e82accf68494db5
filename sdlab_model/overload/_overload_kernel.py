"""The overload simulator's compiled event loop: c servers, one FCFS queue with a limit and a
deadline, greedy batching, and clients that retry within a token-bucket budget.

Loaded lazily by ``sdlab_model.overload.simulate`` so that ``import sdlab_model`` imports no
numba. Events, earliest first: a fresh arrival (from the pre-drawn Poisson stream), a retry
(from a binary min-heap of due times), a service start (a server free and a request waiting:
it takes up to ``max_batch`` from the head) and a timeout (the head's deadline). The queue is
FCFS in arrival order, so deadlines leave from its head and timeouts need no event list of their
own. Ties: a start before a timeout before an arrival.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sdlab_model.overload.outcome import Outcome
from sdlab_model.simulation._sim_kernel import replace_min

_SERVED = int(Outcome.SERVED)
_LATE = int(Outcome.LATE)
_REJECTED = int(Outcome.REJECTED)
_TIMED_OUT = int(Outcome.TIMED_OUT)


def _compile(function):
    """``njit(cache=True, nogil=True)``, or uncached where no cache directory is writable."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


def _heap_push(times: np.ndarray, tries: np.ndarray, size: int, time: float, attempt: int) -> int:
    """Push ``(time, attempt)`` on the min-heap of the first ``size`` entries; the new size."""
    position = size
    while position > 0:
        parent = (position - 1) // 2
        if times[parent] <= time:
            break
        times[position] = times[parent]
        tries[position] = tries[parent]
        position = parent
    times[position] = time
    tries[position] = attempt
    return size + 1


def _heap_pop(times: np.ndarray, tries: np.ndarray, size: int) -> int:
    """Remove the heap's smallest entry (read it first); the new size."""
    size -= 1
    time, attempt = times[size], tries[size]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and times[child + 1] < times[child]:
            child += 1
        if times[child] >= time:
            break
        times[position] = times[child]
        tries[position] = tries[child]
        position = child
    if size > 0:
        times[position] = time
        tries[position] = attempt
    return size


heap_push = _compile(_heap_push)
heap_pop = _compile(_heap_pop)


def _retry(
    failed_at: float,
    failed_try: int,
    max_retries: int,
    budget_ratio: float,
    tokens: float,
    backoff_ms: np.ndarray,
    backoffs: int,
    retry_at: np.ndarray,
    retry_try: np.ndarray,
    retries: int,
) -> tuple[int, int, float]:
    """Schedule the retry of an attempt that failed at ``failed_at``, if it has tries left and
    the budget a token (``budget_ratio < 0``: no budget). The heap's size, the backoffs used and
    the tokens left."""
    if failed_try >= max_retries or backoffs >= backoff_ms.size:
        return retries, backoffs, tokens
    if budget_ratio >= 0.0:
        if tokens < 1.0:
            return retries, backoffs, tokens
        tokens -= 1.0
    at = failed_at + backoff_ms[backoffs]
    retries = heap_push(retry_at, retry_try, retries, at, failed_try + 1)
    return retries, backoffs + 1, tokens


retry = _compile(_retry)


def _run_overload(
    fresh_ms: np.ndarray,
    backoff_ms: np.ndarray,
    servers: int,
    max_batch: int,
    batch_service_ms: np.ndarray,
    queue_limit: int,
    deadline_ms: float,
    max_retries: int,
    budget_ratio: float,
    budget_depth: float,
    arrival_ms: np.ndarray,
    outcome: np.ndarray,
    response_ms: np.ndarray,
    try_of: np.ndarray,
) -> int:
    """Serve ``fresh_ms`` (sorted) and their retries; the number of attempts written.

    Attempt ``k`` gets ``arrival_ms[k]``, ``outcome[k]`` (``Outcome``), ``response_ms[k]``
    (served ones) and ``try_of[k]`` (0 fresh, 1 first retry ...). ``queue_limit < 0``: none.
    ``budget_ratio < 0``: retries are not budgeted. ``backoff_ms`` holds one backoff per
    possible retry. The run ends at the last fresh arrival; what is still queued then stays
    ``PENDING``.
    """
    capacity = arrival_ms.size
    horizon = fresh_ms[-1]
    free = np.zeros(servers)
    queue = np.empty(capacity, dtype=np.int64)
    head = 0
    tail = 0
    retry_at = np.empty(capacity)
    retry_try = np.empty(capacity, dtype=np.int64)
    retries = 0
    next_fresh = 0
    attempts = 0
    backoffs = 0
    tokens = budget_depth
    while True:
        t_arrival = fresh_ms[next_fresh] if next_fresh < fresh_ms.size else np.inf
        if retries > 0 and retry_at[0] < t_arrival:
            t_arrival = retry_at[0]
        t_start = np.inf
        t_timeout = np.inf
        if tail > head:
            first = queue[head]
            t_start = max(free[0], arrival_ms[first])
            t_timeout = arrival_ms[first] + deadline_ms
        now = min(t_arrival, min(t_start, t_timeout))
        if now > horizon or attempts >= capacity:
            break
        if t_start <= t_timeout and t_start <= t_arrival:
            batch = min(max_batch, tail - head)
            done = now + batch_service_ms[batch]
            replace_min(free, done)
            for _ in range(batch):
                k = queue[head]
                head += 1
                response_ms[k] = done - arrival_ms[k]
                if response_ms[k] <= deadline_ms:
                    outcome[k] = _SERVED
                else:
                    outcome[k] = _LATE
                    # the client gave up at its deadline, while the server still worked
                    retries, backoffs, tokens = retry(
                        arrival_ms[k] + deadline_ms,
                        try_of[k],
                        max_retries,
                        budget_ratio,
                        tokens,
                        backoff_ms,
                        backoffs,
                        retry_at,
                        retry_try,
                        retries,
                    )
            continue
        if t_timeout <= t_arrival:
            k = queue[head]
            head += 1
            outcome[k] = _TIMED_OUT
            failed_at = now
            failed_try = try_of[k]
        else:
            k = attempts
            attempts += 1
            arrival_ms[k] = now
            if next_fresh < fresh_ms.size and fresh_ms[next_fresh] == now:
                next_fresh += 1
                try_of[k] = 0
                tokens = min(budget_depth, tokens + max(budget_ratio, 0.0))
            else:
                try_of[k] = retry_try[0]
                retries = heap_pop(retry_at, retry_try, retries)
            idle = free[0] <= now and tail == head
            if idle or queue_limit < 0 or tail - head < queue_limit:
                queue[tail] = k
                tail += 1
                continue
            outcome[k] = _REJECTED
            failed_at = now
            failed_try = try_of[k]
        retries, backoffs, tokens = retry(
            failed_at,
            failed_try,
            max_retries,
            budget_ratio,
            tokens,
            backoff_ms,
            backoffs,
            retry_at,
            retry_try,
            retries,
        )
    return attempts


run_overload = _compile(_run_overload)
