"""LLM serving: tokens, prefill and decode, the KV cache and continuous batching (issue 23).

- ``catalog``: open model architectures and GPUs, sourced (data in ``llm/data``).
- ``kv_cache``: KV bytes per token and the tokens that fit beside the weights.
- ``iteration``: one engine iteration's time from a roofline; ``calibration`` fits its
  efficiency factors on one published measurement.
- ``workload``: the inputs (``LlmWorkload``) and their ranges.
- ``lengths``, ``length_sample``: prompt and output lengths, a lognormal or measured requests
  (``LengthSample``, read from a CSV by ``parse_length_csv``).
- ``analytic``: TTFT, TPOT and end-to-end percentiles, throughput, goodput and cost at a rate.
- ``capacity``: the largest stable rate and the largest rate meeting the targets.
- ``heatmap``: TTFT and TPOT p99 over any two inputs.
- ``simulator``: the token-level, iteration-level simulator that checks the analytic model.
- ``cheapest``: the cheapest GPU × precision × tensor parallel × replicas meeting the targets.
- ``disaggregation``: aggregated against prefill/decode pools, goodput per GPU at the targets.
- ``architecture``: the serving path as a diagram (DOT) with an estimate's numbers on it.
"""

from sdlab_model.llm.analytic import LlmEstimate, llm_estimates, llm_grid, llm_latency
from sdlab_model.llm.architecture import llm_dot
from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY, FIT_MEASUREMENT, fit_efficiency
from sdlab_model.llm.capacity import max_rate_at_targets, max_stable_rate
from sdlab_model.llm.catalog import GPUS, MODELS, Gpu, ModelArchitecture, gpu_by_id, model_by_id
from sdlab_model.llm.cheapest import DeploymentOption, cheapest_deployments
from sdlab_model.llm.disaggregation import DisaggregationComparison, compare_disaggregation
from sdlab_model.llm.heatmap import LlmHeatmap, llm_heatmap
from sdlab_model.llm.iteration import EngineEfficiency, IterationCost, iteration_cost
from sdlab_model.llm.kv_cache import KvCapacity, kv_bytes_per_token, kv_capacity
from sdlab_model.llm.length_sample import LengthSample, length_csv, parse_length_csv
from sdlab_model.llm.simulator import LlmSimResult, simulate_llm
from sdlab_model.llm.workload import INPUT_RANGES, LlmWorkload

__all__ = [
    "DEFAULT_EFFICIENCY",
    "FIT_MEASUREMENT",
    "GPUS",
    "INPUT_RANGES",
    "MODELS",
    "DeploymentOption",
    "DisaggregationComparison",
    "EngineEfficiency",
    "Gpu",
    "IterationCost",
    "KvCapacity",
    "LengthSample",
    "LlmEstimate",
    "LlmHeatmap",
    "LlmSimResult",
    "LlmWorkload",
    "ModelArchitecture",
    "cheapest_deployments",
    "compare_disaggregation",
    "fit_efficiency",
    "gpu_by_id",
    "iteration_cost",
    "kv_bytes_per_token",
    "kv_capacity",
    "length_csv",
    "llm_dot",
    "llm_estimates",
    "llm_grid",
    "llm_heatmap",
    "llm_latency",
    "max_rate_at_targets",
    "max_stable_rate",
    "model_by_id",
    "parse_length_csv",
    "simulate_llm",
]
