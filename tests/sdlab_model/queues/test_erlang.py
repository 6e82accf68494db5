"""Erlang B/C and the M/M/c quantiles against textbook values and independent closed forms."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from sdlab_model.queues import erlang, queueing


def _erlang_b_direct(servers: int, load: Fraction) -> Fraction:
    """Erlang B from its definition, in exact rational arithmetic: (a^c/c!) / sum_k a^k/k!."""
    terms = [load**k / math.factorial(k) for k in range(servers + 1)]
    return terms[-1] / sum(terms)


def test_erlang_c_two_servers_unit_load_is_one_third():
    # Hand-derived: B(2, 1) = (1/2) / (1 + 1 + 1/2) = 1/5; C = B / (1 - rho (1 - B)) = 1/3.
    assert erlang.erlang_c(2, 1.0) == pytest.approx(1 / 3, rel=1e-14), "C(2, 1) should be 1/3"


def test_erlang_b_table_value():
    # Erlang B tables (e.g. ITU-D Teletraffic Engineering Handbook, table of B(n, A)):
    # B(10, 5) = 0.01838.
    assert erlang.erlang_b(10, 5.0) == pytest.approx(0.018385, abs=5e-6), "B(10, 5) vs the table"


@pytest.mark.parametrize(("servers", "load"), [(1, "1/2"), (3, "2"), (7, "13/2"), (20, "15")])
def test_erlang_b_matches_exact_rational_definition(servers, load):
    exact = float(_erlang_b_direct(servers, Fraction(load)))
    got = erlang.erlang_b(servers, float(Fraction(load)))
    assert got == pytest.approx(exact, rel=1e-12), f"Erlang B({servers}, {load}) drifted from exact"


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9])
def test_erlang_c_one_server_is_utilization(rho):
    assert erlang.erlang_c(1, rho) == pytest.approx(rho, rel=1e-13), "M/M/1 waits w.p. rho"


def test_erlang_c_stable_for_thousands_of_servers():
    # Independent route: B = P(N = c) / P(N <= c) for N ~ Poisson(a), in log space.
    servers, load = 8000, 7600.0
    k = np.arange(servers + 1)
    log_terms = k * math.log(load) - np.array([math.lgamma(i + 1.0) for i in k])
    blocking = math.exp(log_terms[-1] - np.logaddexp.reduce(log_terms))
    expected = blocking / (1 - load / servers * (1 - blocking))
    got = erlang.erlang_c(servers, load)
    assert 0.0 < got < 1.0, f"C(8000, 7600) = {got} is not a probability"
    assert got == pytest.approx(expected, rel=1e-9), "Erlang C for 8000 servers lost precision"


def test_erlang_arrays_match_scalars():
    servers = np.array([1, 4, 32, 500])
    loads = np.array([0.5, 3.0, 25.0, 480.0])
    got = erlang.erlang_c_array(servers, loads)
    expected = [erlang.erlang_c(int(c), float(a)) for c, a in zip(servers, loads, strict=True)]
    assert np.allclose(got, expected, rtol=1e-13), "vectorized Erlang C differs from the scalar"


def test_erlang_b_of_a_few_cells_is_the_vectorized_recursions_bit_for_bit(monkeypatch):
    rng = np.random.default_rng(7)
    servers, loads = rng.integers(1, 600, 30), rng.uniform(0.0, 700.0, 30)
    few = erlang.erlang_b_array(servers, loads)
    monkeypatch.setattr(erlang, "_SCALAR_CELLS", 0)
    vectorized = erlang.erlang_b_array(servers, loads)
    assert np.array_equal(few, vectorized), "cell by cell differs from the vectorized recursion"


def test_erlang_c_is_one_at_capacity():
    assert erlang.erlang_c(4, 4.0) == 1.0, "at rho = 1 every arrival waits"


@pytest.mark.parametrize(("rate_rps", "service_ms"), [(50.0, 15.0), (90.0, 10.0)])
def test_mm1_p99_closed_form(rate_rps, service_ms):
    # M/M/1 response time is exponential with rate mu - lambda: p99 = ln(100) / (mu - lambda).
    mu, lam = 1 / service_ms, rate_rps / 1000
    expected = math.log(100) / (mu - lam)
    got = queueing.mmc_p99_ms(1, rate_rps, service_ms)
    assert got == pytest.approx(expected, rel=1e-6), "M/M/1 p99 differs from ln(100)/(mu-lambda)"


@pytest.mark.parametrize(("servers", "rho"), [(1, 0.5), (4, 0.9), (32, 0.5), (32, 0.9)])
def test_mmc_p99_solves_closed_form_survival(servers, rho):
    service_ms = 20.0
    rate_rps = rho * servers / service_ms * 1000
    t = queueing.mmc_p99_ms(servers, rate_rps, service_ms)
    # Independent evaluation of P(W + S > t): numerically convolve W's law with S's.
    mu, lam = 1 / service_ms, rate_rps / 1000
    wait_prob, decay = erlang.erlang_c(servers, lam / mu), servers * mu - lam
    w = np.linspace(0.0, t, 200_001)
    density = wait_prob * decay * np.exp(-decay * w) * np.exp(-mu * (t - w))
    integral = float(np.sum((density[1:] + density[:-1]) * np.diff(w)) / 2)
    survival = (1 - wait_prob) * math.exp(-mu * t) + integral + wait_prob * math.exp(-decay * t)
    assert survival == pytest.approx(0.01, rel=1e-6), (
        f"P(W+S > p99) = {survival} for M/M/{servers} at rho={rho}, not 0.01"
    )


def test_mmc_wait_quantile_closed_form():
    servers, service_ms, rate_rps = 4, 20.0, 180.0
    mu, lam = 1 / service_ms, rate_rps / 1000
    expected = math.log(erlang.erlang_c(servers, lam / mu) / 0.01) / (servers * mu - lam)
    got = erlang.mmc_wait_quantile_ms(servers, rate_rps, service_ms, 0.99)
    assert got == pytest.approx(expected, rel=1e-12), "M/M/c wait p99 vs ln(C/0.01)/(c mu - lambda)"


def test_mmc_unstable_is_infinite():
    assert math.isinf(queueing.mmc_p99_ms(2, 100.0, 20.0)), "rho = 1 must give an infinite p99"
