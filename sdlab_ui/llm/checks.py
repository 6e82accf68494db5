"""The LLM page's work on request: the cheapest deployment meeting every target, aggregated
against disaggregated serving, and the token-level simulator against the analytic model.

Each takes a second or more, so each waits for a button, runs in the heavy lane, is cached, and
reruns as a fragment of its own. A result stays on the page while the inputs it answered stay.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from sdlab_model.llm import (
    DeploymentOption,
    DisaggregationComparison,
    LlmEstimate,
    LlmSimResult,
    LlmWorkload,
    cheapest_deployments,
    compare_disaggregation,
    gpu_by_id,
    simulate_llm,
)
from sdlab_ui.llm import controls
from sdlab_ui.llm.fields import cache_key
from sdlab_ui.server import budget, runs
from sdlab_ui.text import ms_text, rate_text

CHEAPEST_KEY = "llm.cheapest"
USE_CHEAPEST_KEY = "llm.use_cheapest"
DISAGGREGATION_KEY = "llm.disaggregation"
SIMULATE_KEY = "llm.simulate"
SIMULATION_SEED = 0
SHOWN_OPTIONS = 8
_KEY = {LlmWorkload: cache_key}


@st.cache_data(max_entries=16, hash_funcs=_KEY, show_spinner="Pricing every GPU and split…")
def cached_cheapest(workload: LlmWorkload) -> list[DeploymentOption]:
    """``cheapest_deployments`` (every GPU × precision × tensor parallel: seconds)."""
    with budget.slot(budget.HEAVY):
        return cheapest_deployments(workload)


@st.cache_data(max_entries=16, hash_funcs=_KEY, show_spinner="Comparing every split…")
def cached_disaggregation(workload: LlmWorkload, instances: int) -> DisaggregationComparison:
    """``compare_disaggregation`` over ``instances`` (up to a few seconds)."""
    with budget.slot(budget.HEAVY):
        return compare_disaggregation(workload, instances)


@st.cache_data(max_entries=16, hash_funcs=_KEY, show_spinner="Simulating token by token…")
def cached_simulation(workload: LlmWorkload) -> LlmSimResult:
    """``simulate_llm`` of one replica until its p99 intervals are tight (up to seconds)."""
    with budget.slot(budget.HEAVY):
        return simulate_llm(workload, seed=SIMULATION_SEED)


def _asked(key: str, workload: LlmWorkload, label: str) -> bool:
    """Whether the visitor has asked for this result for these inputs (the button now, or
    before without a change since)."""
    if st.button(label, key=key):
        st.session_state[key + ".for"] = workload
    return st.session_state.get(key + ".for") == workload


def _options_table(options: list[DeploymentOption]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "GPU": [gpu_by_id(o.gpu_id).name for o in options],
            "Precision": [o.precision.upper() for o in options],
            "Tensor parallel": [o.tensor_parallel for o in options],
            "Replicas": [o.replicas for o in options],
            "Req/s per replica at the targets": [round(o.rate_per_replica_rps, 2) for o in options],
            "$/h": [round(o.usd_per_hour, 2) for o in options],
            "$ per 1M output tokens": [round(o.usd_per_million_output_tokens, 3) for o in options],
        }
    )


def option_text(option: DeploymentOption) -> str:
    """One deployment in words: what it runs on and what it costs."""
    replicas = "1 replica" if option.replicas == 1 else f"{option.replicas} replicas"
    return (
        f"**{replicas} of {option.tensor_parallel} × {gpu_by_id(option.gpu_id).name}** "
        f"({option.precision.upper()}) at **${option.usd_per_hour:,.2f}/h**, "
        f"${option.usd_per_million_output_tokens:,.3f} per million output tokens"
    )


@runs.fragment
def cheapest(workload: LlmWorkload) -> None:
    """The cheapest deployments meeting every target at this rate, and a button to use one."""
    st.subheader("The cheapest deployment meeting every target")
    if workload.rate_rps <= 0:
        st.caption("Set a request rate above 0 to size a deployment.")
        return
    if not _asked(CHEAPEST_KEY, workload, "Find the cheapest deployment"):
        st.caption(
            "Searches every priced GPU, precision and tensor-parallel degree the model fits, "
            "with this page's traffic, engine knobs and targets; replicas as many as needed."
        )
        return
    options = cached_cheapest(workload)
    if not options:
        st.warning(
            "No deployment in the catalog meets every target at this rate.",
            icon=":material/warning:",
        )
        return
    best = options[0]
    st.markdown(f"Cheapest: {option_text(best)}.")
    st.dataframe(_options_table(options[:SHOWN_OPTIONS]), hide_index=True)
    if st.button("Use the cheapest", key=USE_CHEAPEST_KEY):
        controls.update(
            {
                "gpu_id": best.gpu_id,
                "precision": best.precision,
                "tensor_parallel": best.tensor_parallel,
                "replicas": best.replicas,
            }
        )
        st.rerun()


@runs.fragment
def disaggregation(workload: LlmWorkload) -> None:
    """Aggregated serving against every prefill/decode split of the same instances."""
    st.subheader("Aggregated or disaggregated prefill and decode")
    instances = min(max(2, workload.replicas), 64)
    if not _asked(DISAGGREGATION_KEY, workload, "Compare with disaggregated serving"):
        st.caption(
            f"Splits {instances} instances of tensor parallel {workload.tensor_parallel} into "
            "a prefill pool and a decode pool (the KV cache sent between them) and compares "
            "the most each serves within the TTFT and TPOT targets. Analytic only."
        )
        return
    comparison = cached_disaggregation(workload, instances)
    aggregated, best = comparison.aggregated, comparison.best_split
    if max(aggregated.max_rate_rps, best.max_rate_rps) <= 0:
        st.markdown(f"With {instances} instances, neither way meets the TTFT and TPOT targets.")
        return
    verdict = "disaggregated wins" if comparison.disaggregation_wins else "aggregated wins"
    st.markdown(
        f"With {instances} instances, **{verdict}**: aggregated serves "
        f"**{rate_text(aggregated.max_rate_rps)}** within the targets "
        f"({rate_text(aggregated.goodput_rps_per_gpu)} per GPU); the best split, "
        f"{best.prefill_instances} prefill + {best.decode_instances} decode, serves "
        f"**{rate_text(best.max_rate_rps)}** ({rate_text(best.goodput_rps_per_gpu)} per GPU)."
    )


def _interval(low: float, high: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "—"
    return f"{ms_text(low)} to {ms_text(high)}"


@runs.fragment
def simulator(workload: LlmWorkload, result: LlmEstimate) -> None:
    """The token-level simulator's TTFT and TPOT p99 of one replica beside the analytic ones."""
    st.subheader("Check with the simulator")
    if workload.rate_rps <= 0 or not workload.kv_capacity().fits:
        st.caption("The simulator needs a rate above 0 and a model that fits with its KV cache.")
        return
    if not _asked(SIMULATE_KEY, workload, "Check with the simulator"):
        st.caption(
            "Serves Poisson traffic (the same draw every time) through one replica's engine, "
            "iteration by "
            "iteration (vLLM's scheduler: token budget, chunked prefill, KV blocks, "
            "preemption), until its p99 intervals are within 10%."
        )
        return
    simulated = cached_simulation(workload)
    st.table(
        pd.DataFrame(
            {
                "Latency": ["TTFT p99", "TPOT p99"],
                "Analytic": [ms_text(result.ttft_p99_ms), ms_text(result.tpot_p99_ms)],
                "Simulated": [ms_text(simulated.ttft.p99_ms), ms_text(simulated.tpot.p99_ms)],
                "Simulator's 95% interval": [
                    _interval(simulated.ttft.p99_low_ms, simulated.ttft.p99_high_ms),
                    _interval(simulated.tpot.p99_low_ms, simulated.tpot.p99_high_ms),
                ],
            }
        ).set_index("Latency")
    )
    rate = rate_text(workload.rate_per_replica_rps)
    if not simulated.is_stable:
        st.caption(f"One replica at {rate}, {simulated.requests:,} requests: {simulated.note}.")
        return
    converged = "converged" if simulated.converged else "not converged"
    st.caption(
        f"One replica at {rate}: {simulated.requests:,} requests, {converged}; "
        f"{simulated.preemptions:,} preemptions. {simulated.note}".strip()
    )
