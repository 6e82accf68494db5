"""Measured lengths (``LengthSample``): the analytic model's nodes keep the sample's moments, the
simulator draws whole rows of it, both agree on a sample as they do on the lognormal it came
from, and a CSV of them is read strictly with a reason for every refusal."""

from __future__ import annotations

import numpy as np
import pytest

from sdlab_model.llm import LlmWorkload, compare_disaggregation, llm_latency, simulate_llm
from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY
from sdlab_model.llm.length_sample import (
    MAX_SAMPLE_BYTES,
    MAX_SAMPLE_ROWS,
    LengthSample,
    length_csv,
    parse_length_csv,
)
from sdlab_model.llm.lengths import NODE_WEIGHTS, draw_lengths
from sdlab_model.llm.simulator import run_engine


def _lognormal_sample(rows: int = 5000, seed: int = 3) -> LengthSample:
    rng = np.random.default_rng(seed)
    prompts = draw_lengths(rng, 1000.0, 0.5, rows, 100_000)
    outputs = draw_lengths(rng, 250.0, 0.5, rows, 100_000)
    return LengthSample(tuple(map(int, prompts)), tuple(map(int, outputs)))


BIMODAL = LengthSample((100,) * 900 + (6000,) * 100, (20,) * 900 + (800,) * 100)
"""Short chats and a tenth of long documents with long answers: far from a lognormal."""


@pytest.mark.parametrize(
    ("sample", "cv_tolerance"),
    # A slice that straddles the bimodal sample's jump averages across it: spread ~6% low.
    [(_lognormal_sample(), 0.01), (BIMODAL, 0.07)],
    ids=["lognormal", "bimodal"],
)
@pytest.mark.parametrize("column", ["prompt", "output"])
def test_the_nodes_reproduce_the_samples_moments(sample, cv_tolerance, column):
    values = np.array(sample.prompt_tokens if column == "prompt" else sample.output_tokens)
    nodes = sample.nodes(column, 1_000_000)
    mean = nodes @ NODE_WEIGHTS
    cv = np.sqrt((nodes * nodes) @ NODE_WEIGHTS - mean**2) / mean
    assert mean == pytest.approx(values.mean(), rel=1e-9), f"{column}: the mean is not kept"
    expected = values.std() / values.mean()
    assert cv == pytest.approx(expected, rel=cv_tolerance), f"{column}: cv {cv:.3f}, {expected:.3f}"
    assert values.min() <= nodes.min() and nodes.max() <= values.max(), "a node outside the rows"
    assert np.all(np.diff(nodes) >= 0), "nodes out of order"


def test_the_workload_takes_the_samples_moments_and_keeps_it_until_a_length_moves():
    sample = _lognormal_sample()
    workload = LlmWorkload(prompt_tokens_mean=7.0, length_sample=sample)
    assert workload.prompt_tokens_mean == pytest.approx(sample.mean("prompt")), "not the sample's"
    assert workload.output_tokens_cv == pytest.approx(sample.cv("output")), "not the sample's cv"
    assert workload.with_changes(rate_rps=9.0).length_sample is sample, "a rate dropped it"
    same = workload.with_changes(prompt_tokens_mean=workload.prompt_tokens_mean)
    assert same.length_sample is sample, "an unchanged length dropped the sample"
    moved = workload.with_changes(prompt_tokens_mean=500.0)
    assert moved.length_sample is None and moved.prompt_tokens_mean == 500.0, "still the sample"
    assert moved.prompt_tokens_cv == workload.prompt_tokens_cv, "the sample's spread was lost"


def test_a_constant_sample_is_the_zero_spread_lognormal():
    sample = LengthSample((1200,) * 50, (300,) * 50)
    measured = llm_latency(LlmWorkload(length_sample=sample))
    fixed = llm_latency(
        LlmWorkload(
            prompt_tokens_mean=1200.0,
            prompt_tokens_cv=0.0,
            output_tokens_mean=300.0,
            output_tokens_cv=0.0,
        )
    )
    for name in ("ttft_ms", "tpot_ms", "e2e_ms"):
        got, expected = getattr(measured, name), getattr(fixed, name)
        assert np.allclose(got, expected, rtol=1e-9), f"{name}: {got} against {expected}"


def test_the_simulator_draws_whole_rows_of_the_sample():
    workload = LlmWorkload(rate_rps=2.0, length_sample=BIMODAL)
    _, _, _, prompt, output, _ = run_engine(workload, DEFAULT_EFFICIENCY, 4000, seed=5)
    pairs = set(zip(prompt.tolist(), output.tolist(), strict=True))
    assert pairs == {(100, 20), (6000, 800)}, f"rows not drawn whole: {sorted(pairs)[:5]}"
    long_share = float(np.mean(prompt == 6000))
    assert 0.08 < long_share < 0.12, f"{long_share:.3f} long rows drawn, the sample has 10%"


def test_analytic_and_simulator_agree_on_a_measured_sample_as_on_its_lognormal():
    workload = LlmWorkload(rate_rps=6.0, length_sample=_lognormal_sample())
    estimate = llm_latency(workload)
    assert not estimate.approximate, "the point is meant to be inside the model's accuracy"
    simulated = simulate_llm(workload, requests=4000, max_requests=4000, seed=1)
    for name, a, s in (
        ("TTFT", estimate.ttft_p99_ms, simulated.ttft.p99_ms),
        ("TPOT", estimate.tpot_p99_ms, simulated.tpot.p99_ms),
    ):
        assert abs(a / s - 1.0) <= 0.15, f"{name} p99: analytic {a:.1f} ms, simulated {s:.1f} ms"


def test_a_sample_longer_than_the_models_context_is_refused_by_name():
    sample = LengthSample((1000, 4000), (100, 200))
    with pytest.raises(ValueError, match=r"longest request \(4,200 tokens.*context of 4,096"):
        LlmWorkload(model_id="llama-2-13b", length_sample=sample)


def test_the_prefill_pool_of_a_disaggregated_split_keeps_the_measured_prompts():
    workload = LlmWorkload(rate_rps=6.0, replicas=2, length_sample=BIMODAL)
    comparison = compare_disaggregation(workload, 2)
    assert comparison.aggregated.max_rate_rps > 0, "aggregated serving found no rate"


CSV_REFUSALS = {
    "non-integer": (
        b"prompt_tokens,output_tokens\n100,20\n12.5,3\n",
        "row 3: prompt_tokens '12.5'",
    ),
    "text": (b"100,20\n100,lots\n", "row 2: output_tokens 'lots' is not a number"),
    "negative": (b"100,20\n-5,3\n", "row 2: prompt_tokens -5 is negative"),
    "zero output": (b"100,0\n", "row 1: output_tokens is 0"),
    "zero prompt": (b"0,10\n", "row 1: prompt_tokens is 0"),
    "three cells": (b"100,20,5\n", "row 1 has 3 cells"),
    "empty": (b"", "no rows"),
    "header only": (b"prompt_tokens,output_tokens\n", "no rows"),
    "binary": (bytes(range(256)) * 8, "not UTF-8"),
    "NUL bytes": (b"100,20\n\x00\x00\n", "not text"),
    "huge number": (b"100," + b"9" * 400 + b"\n", "row 1: output_tokens"),
    "too many rows": (b"1,1\n" * (MAX_SAMPLE_ROWS + 1), f"at most {MAX_SAMPLE_ROWS:,}"),
    "too big": (b"1,1\n" * (MAX_SAMPLE_BYTES // 4 + 1), "over 1,000 kB"),
}


@pytest.mark.parametrize("case", CSV_REFUSALS)
def test_a_bad_csv_is_refused_with_its_reason(case):
    data, reason = CSV_REFUSALS[case]
    with pytest.raises(ValueError, match=None) as refused:
        parse_length_csv(data)
    assert reason in str(refused.value), f"{case}: {refused.value}"


def test_a_csv_reads_with_or_without_its_header_and_round_trips():
    sample = parse_length_csv(b"\xef\xbb\xbfprompt_tokens,output_tokens\r\n800,200\r\n\r\n30,4\r\n")
    rows = (sample.prompt_tokens.tolist(), sample.output_tokens.tolist())
    assert rows == ([800, 30], [200, 4]), f"not the rows: {rows}"
    assert parse_length_csv(b"800,200\n30,4") == sample, "without a header, not the same sample"
    assert parse_length_csv(length_csv(sample).encode()) == sample, "no round trip"


def test_a_sample_is_compact_read_only_and_equal_by_content():
    sample = _lognormal_sample(rows=MAX_SAMPLE_ROWS)
    assert sample.prompt_tokens.nbytes + sample.output_tokens.nbytes == 8 * MAX_SAMPLE_ROWS, (
        "not int32"
    )
    with pytest.raises(ValueError, match="read-only"):
        sample.prompt_tokens[0] = 5
    again = LengthSample(list(sample.prompt_tokens), list(sample.output_tokens), "another name")
    assert again == sample and hash(again) == hash(sample), "the same rows are another sample"
    assert LlmWorkload(length_sample=again) == LlmWorkload(length_sample=sample), "workloads"
    assert sample != BIMODAL, "different rows are equal"


@pytest.mark.parametrize(
    "rows", [(1.5, 2.0), (True, False), (0, 3), (2**40, 3)], ids=["floats", "booleans", "0", "huge"]
)
def test_a_sample_of_anything_but_whole_numbers_in_range_is_refused(rows):
    with pytest.raises(ValueError, match="prompt_tokens must be"):
        LengthSample(rows, (1, 1))


def test_a_sample_whose_long_prompts_bring_long_outputs_is_flagged_approximate():
    independent = _lognormal_sample()
    assert abs(independent.rank_correlation) < 0.05, f"{independent.rank_correlation:.3f}"
    assert BIMODAL.rank_correlation == pytest.approx(1.0), "BIMODAL's long rows go together"
    linked = llm_latency(LlmWorkload(rate_rps=0.5, length_sample=BIMODAL))
    alone = llm_latency(
        LlmWorkload(rate_rps=0.5, length_sample=LengthSample(BIMODAL.prompt_tokens, (20,) * 1000))
    )
    assert linked.approximate, "linked lengths not flagged"
    assert "go together" in linked.approximate_because, linked.approximate_because
    assert "go together" not in alone.approximate_because, alone.approximate_because
