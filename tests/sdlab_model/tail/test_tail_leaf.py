"""The leaf's fit matches the three quantiles it is given, and its draws follow its own CDF."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.tail import fit_leaf


@pytest.mark.parametrize("quantiles", [(1.0, 5.0, 10.0), (2.0, 3.0, 4.5), (0.3, 7.0, 40.0)])
def test_fit_matches_the_three_quantiles_exactly(quantiles):
    leaf = fit_leaf(*quantiles)
    fitted = [leaf.quantile(q) for q in (0.5, 0.95, 0.99)]
    assert fitted == pytest.approx(quantiles, rel=1e-12)


def test_table_1_leaf_has_the_pareto_index_of_its_p95_to_p99_slope():
    leaf = fit_leaf(1.0, 5.0, 10.0)
    # P(X > 5) = 0.05 and P(X > 10) = 0.01: a halving of the tail per log2(5) doublings
    assert leaf.tail_index == pytest.approx(math.log(5.0) / math.log(2.0))
    assert leaf.sigma == pytest.approx(math.log(5.0) / 1.6448536269514722)


def test_sf_and_isf_are_inverse_from_the_body_to_the_far_tail():
    leaf = fit_leaf(1.0, 5.0, 10.0)
    for tail in (0.7, 0.2, 0.0500001, 0.05, 0.01, 1e-4, 1e-9):
        assert float(leaf.sf(leaf.isf(tail))) == pytest.approx(tail, rel=1e-9)


def test_cdf_is_continuous_at_the_splice():
    leaf = fit_leaf(1.0, 5.0, 10.0)
    below, above = leaf.sf(5.0 - 1e-9), leaf.sf(5.0 + 1e-9)
    assert float(below) == pytest.approx(float(above), rel=1e-6)


def test_draws_follow_the_fitted_distribution():
    leaf = fit_leaf(1.0, 5.0, 10.0)
    draws = leaf.sample(np.random.default_rng(7), 1_000_000)
    for q in (0.1, 0.5, 0.9, 0.95, 0.99, 0.999):
        share_below = float(np.mean(draws <= leaf.quantile(q)))
        # binomial standard error of a share from a million draws, four of them
        assert abs(share_below - q) < 4.0 * math.sqrt(q * (1.0 - q) / draws.size)
    assert draws.mean() == pytest.approx(leaf.mean(), rel=0.01)


def test_fit_refuses_quantiles_out_of_order():
    with pytest.raises(ValueError, match="p50 < p95 < p99"):
        fit_leaf(1.0, 10.0, 5.0)
    with pytest.raises(ValueError, match="tail probability"):
        fit_leaf(1.0, 5.0, 10.0).isf(0.0)


def test_scaled_leaf_is_every_quantile_times_the_factor():
    leaf = fit_leaf(1.0, 5.0, 10.0)
    slower = leaf.scaled(1.5)
    for q in (0.1, 0.5, 0.95, 0.99, 0.9999):
        assert slower.quantile(q) == pytest.approx(1.5 * leaf.quantile(q), rel=1e-12)
    assert slower.mean() == pytest.approx(1.5 * leaf.mean())
