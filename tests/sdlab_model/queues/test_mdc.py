"""The exact M/D/c solve: GTH state reduction against a dense solve of the same chain."""

from __future__ import annotations

import numpy as np
import pytest

from sdlab_model.queues import _mdc_kernel, mdc
from sdlab_model.queues.mdc import MdcWait

SERVERS = (1, 2, 4, 16, 32, 64, 128, 256)
UTILIZATIONS = (0.05, 0.5, 0.9, 0.99, 0.994)
NEAR_SATURATION = 0.99
LONG_CHAIN_SERVERS = (1, 32, 256)
"""Near saturation the chain has 1,700-2,500 states and each dense reference takes seconds: there
the comparison runs at one, a typical and the largest GTH server count (the suite's time)."""


def _dense_reference(servers: int, offered_load: float, states: int) -> np.ndarray:
    """The solve as it was before GTH (still the one above ``GTH_MAX_SERVERS``): balance
    equations of states 1 .. n-1 and sum q = 1, by one dense LU solve."""
    pmf = mdc.poisson_pmf(offered_load, 0, servers + states)
    return mdc.dense_stationary(pmf, servers, states)


@pytest.mark.parametrize("servers", SERVERS)
def test_gth_solve_equals_the_dense_solve(servers):
    for utilization in UTILIZATIONS:
        if utilization >= NEAR_SATURATION and servers not in LONG_CHAIN_SERVERS:
            continue
        wait = MdcWait.solve(servers, servers * utilization)
        reference = _dense_reference(servers, servers * utilization, wait.queue_pmf.size)
        gap = float(np.max(np.abs(wait.queue_pmf - reference)))
        assert gap <= 1e-12, f"M/D/{servers} at utilization {utilization}: GTH off by {gap:.2e}"
        assert abs(wait.queue_pmf.sum() - 1.0) <= 1e-12, f"M/D/{servers}: pmf does not sum to 1"


def test_truncation_is_unchanged_around_max_states():
    # Utilization 0.9925 needs just under MAX_STATES states, 0.994 just over (then capped).
    inside = MdcWait.solve(4, 4 * 0.9925)
    capped = MdcWait.solve(4, 4 * 0.994)
    assert inside.is_exact and inside.queue_pmf.size < mdc.MAX_STATES, (
        f"0.9925 should fit: {inside.queue_pmf.size} states, exact={inside.is_exact}"
    )
    assert capped.queue_pmf.size == mdc.MAX_STATES and not capped.is_exact, (
        f"0.994 should be cut at MAX_STATES: {capped.queue_pmf.size}, exact={capped.is_exact}"
    )
    reference = _dense_reference(4, 4 * 0.994, mdc.MAX_STATES)
    gap = float(np.max(np.abs(capped.queue_pmf - reference)))
    assert gap <= 1e-12, f"at MAX_STATES the GTH solve is off the dense one by {gap:.2e}"


def test_above_gth_max_servers_the_dense_solve_is_used():
    servers = mdc.GTH_MAX_SERVERS + 1
    wait = MdcWait.solve(servers, servers * 0.9)
    reference = _dense_reference(servers, servers * 0.9, wait.queue_pmf.size)
    assert np.array_equal(wait.queue_pmf, reference), "above GTH_MAX_SERVERS: not the dense solve"


def test_the_comparison_catches_a_kernel_that_drops_one_update(monkeypatch):
    # The interpreted elimination with one rank-one update left out (eliminating state 2, the
    # update of the moves into state 1): the comparison the tests above make must see it.
    servers, load = 4, 4 * 0.9
    states = MdcWait.solve(servers, load).queue_pmf.size
    pmf = mdc.poisson_pmf(load, 0, servers + states)
    reference = _dense_reference(servers, load, states)

    def solve_skipping(skipped_call: int) -> np.ndarray:
        calls = []

        def add_scaled(target, weight, source):
            calls.append(target.shape[0])
            if len(calls) != skipped_call:
                _mdc_kernel._add_scaled(target, weight, source)

        monkeypatch.setattr(_mdc_kernel, "add_scaled", add_scaled)
        t = _mdc_kernel.transitions(pmf, servers, states)
        _mdc_kernel._eliminate(t, servers)
        return _mdc_kernel.back_substitute(t), calls

    whole, calls = solve_skipping(0)
    gap = float(np.max(np.abs(whole - reference)))
    assert gap <= 1e-12, f"the interpreted elimination itself is off by {gap:.2e}"
    # The last two calls: eliminating state 2 updates row 1 (length 2), state 1 updates row 0.
    assert calls[-2:] == [2, 0], f"unexpected order of updates at the bottom: {calls[-3:]}"
    broken, _ = solve_skipping(len(calls) - 1)
    gap = float(np.max(np.abs(broken - reference)))
    assert gap > 1e-6, f"a dropped update moved the solution by only {gap:.2e}"


def test_the_compiled_wait_uses_the_models_log_factorial():
    """The wait's kernel keeps its own copy of ``mdc.log_factorial`` (a kernel imports nothing
    above it): the two must not drift apart."""
    n = np.arange(3_000)
    compiled = [_mdc_kernel.log_factorial(int(k), mdc._SMALL_LOG_FACTORIALS) for k in n]
    np.testing.assert_allclose(compiled, mdc.log_factorial(n), rtol=1e-15, atol=0)
