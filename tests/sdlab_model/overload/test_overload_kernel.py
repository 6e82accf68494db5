"""The overload kernel compiled and as plain Python give the same attempts to the bit, and its
heap keeps the earliest retry on top."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.overload import _overload_kernel as kernel
from sdlab_model.overload.outcome import Outcome


def _arrays(fresh: int, retries: int):
    size = fresh * (retries + 1)
    return (
        np.zeros(size),
        np.zeros(size, dtype=np.int8),
        np.zeros(size),
        np.zeros(size, dtype=np.int64),
    )


@pytest.mark.parametrize(
    "limit,deadline,budget", [(4, math.inf, -1.0), (-1, 30.0, -1.0), (6, 40.0, 0.2)]
)
def test_compiled_and_plain_python_agree_bit_for_bit(limit, deadline, budget):
    rng = np.random.default_rng(5)
    fresh = np.cumsum(rng.exponential(1000.0 / 900.0, 3_000))  # 900 req/s on 8 x 10 ms
    backoff = rng.exponential(25.0, 3 * fresh.size)
    service = np.array([10.0, 10.0])
    args = (fresh, backoff, 8, 1, service, limit, deadline, 3, budget, 3.0)
    compiled, plain = _arrays(fresh.size, 3), _arrays(fresh.size, 3)
    count = kernel.run_overload(*args, *compiled)
    assert kernel._run_overload(*args, *plain) == count, "attempt counts differ"
    for name, a, b in zip(("arrival", "outcome", "response", "try"), compiled, plain, strict=True):
        assert np.array_equal(a[:count], b[:count]), f"{name} differs"
    outcomes = set(np.unique(compiled[1][:count]))
    assert outcomes - {int(o) for o in Outcome} == set(), f"unknown codes {outcomes}"


def test_the_retry_heap_pops_in_time_order():
    times, tries = np.empty(16), np.empty(16, dtype=np.int64)
    size = 0
    for t in (5.0, 1.0, 4.0, 2.0, 3.0):
        size = kernel.heap_push(times, tries, size, t, int(t))
    popped = []
    while size:
        popped.append(times[0])
        size = kernel.heap_pop(times, tries, size)
    assert popped == [1.0, 2.0, 3.0, 4.0, 5.0], popped
