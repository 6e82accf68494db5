"""The five scenario cards and the guided walkthrough: the original lab's demo path, left to right.

Card values are the original Model Serving lab's (``sources.ORIGINAL_LAB``, described in
docs/teaching_model.md); the advanced inputs of
the queueing model stay at their defaults. Each card is meant to land on its own recommended stage,
1 to 5, which is how the walkthrough tells the story. The questions, answers and takeaways are
ours; the facts in them are the original page's.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdlab_model.workload import Workload


@dataclass(frozen=True)
class Scenario:
    """One scenario card: where it sits on the demo path and the inputs it sets."""

    step: int
    id: str
    title: str
    summary: str
    rate_rps: float
    model_latency_ms: float
    batch_window_ms: float
    replicas: int
    models_hosted: int
    p99_target_ms: float
    dynamic_batching: bool
    gpu: bool

    def workload(self) -> Workload:
        """The card's inputs as a ``Workload``; every other field keeps its default."""
        return Workload(
            rate_rps=self.rate_rps,
            model_latency_ms=self.model_latency_ms,
            batch_window_ms=self.batch_window_ms,
            replicas=self.replicas,
            models_hosted=self.models_hosted,
            p99_target_ms=self.p99_target_ms,
            dynamic_batching=self.dynamic_batching,
            gpu=self.gpu,
        )


@dataclass(frozen=True)
class WalkthroughStep:
    """One step of the guided walkthrough: a question, its answer and what to remember.

    ``question`` and ``answer`` are templates: every number in them is a ``{name}`` filled by
    ``walkthrough_numbers`` from the card's inputs and the chosen model's result, so the prose
    never quotes a number the page does not show.
    """

    step: int
    focus: str
    card_id: str
    question: str
    answer: str
    takeaway: str
    routed_answer: str = ""

    def render(self, numbers: dict[str, str]) -> tuple[str, str]:
        """The question and answer with this card's numbers filled in.

        ``routed_answer`` replaces ``answer`` where the result's placements make model-aware
        routing the cheapest that meets the target (``numbers`` then has ``placement``).
        """
        answer = self.routed_answer if self.routed_answer and "placement" in numbers else None
        return self.question.format(**numbers), (answer or self.answer).format(**numbers)


def walkthrough_numbers(workload: Workload, result) -> dict[str, str]:
    """The numbers the walkthrough quotes, formatted as the page formats them.

    ``result`` is the card's ``Assessment`` (or any object with ``p99_ms``, ``capacity_rps``,
    ``utilization`` and ``mean_batch_size``) under the chosen model. Where its packing numbers
    (``result.packing``) recommend model-aware routing, the numbers add that placement's
    replicas and cost and the dedicated cost beside it.
    """

    def ms(value: float) -> str:
        if value != value or value == float("inf"):
            return "unstable (∞)"
        return f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms"

    return {
        "rate": f"{workload.rate_rps:,.0f}",
        "model_ms": ms(workload.model_latency_ms),
        "gpu_model_ms": ms(workload.model_latency_ms / workload.gpu_speedup),
        "models": f"{workload.models_hosted:,}",
        "replicas": f"{workload.replicas:,}",
        "target": ms(workload.p99_target_ms),
        "capacity": f"{result.capacity_rps:,.0f}",
        "utilization": f"{result.utilization:.0%}",
        "p99": ms(result.p99_ms),
        "batch": f"{result.mean_batch_size:.1f}",
        **_placement_numbers(getattr(result, "packing", None)),
    }


def _placement_numbers(packing) -> dict[str, str]:
    """The routed placement's replicas and cost, formatted as Models and memory shows them."""
    if packing is None or packing.recommended != "model_aware":
        return {}
    return {
        "placement": packing.recommended_label,
        "placement_replicas": f"{packing.recommended_replicas:,}",
        "placement_cost": f"${packing.recommended_usd_per_hour:,.2f}/h",
        "dedicated_cost": f"${packing.dedicated_usd_per_hour:,.2f}/h",
    }


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        1,
        "single-endpoint",
        "Single model endpoint",
        "A light model at low traffic: one CPU replica, nothing else.",
        rate_rps=50,
        model_latency_ms=15,
        batch_window_ms=0,
        replicas=1,
        models_hosted=1,
        p99_target_ms=200,
        dynamic_batching=False,
        gpu=False,
    ),
    Scenario(
        2,
        "batching",
        "Dynamic batching",
        "Sixty times the traffic: batch concurrent requests on CPU replicas.",
        rate_rps=3_000,
        model_latency_ms=20,
        batch_window_ms=10,
        replicas=4,
        models_hosted=1,
        p99_target_ms=150,
        dynamic_batching=True,
        gpu=False,
    ),
    Scenario(
        3,
        "gpu-autoscale",
        "GPU + autoscaling",
        "A heavy model at 25k req/s: batched GPUs behind an autoscaler.",
        rate_rps=25_000,
        model_latency_ms=60,
        batch_window_ms=15,
        replicas=5,
        models_hosted=1,
        p99_target_ms=130,
        dynamic_batching=True,
        gpu=True,
    ),
    Scenario(
        4,
        "registry-canary",
        "Registry + canary",
        "Eight models or versions: a registry, traffic splits and shadow tests.",
        rate_rps=60_000,
        model_latency_ms=50,
        batch_window_ms=12,
        replicas=13,
        models_hosted=8,
        p99_target_ms=100,
        dynamic_batching=True,
        gpu=True,
    ),
    Scenario(
        5,
        "multi-model-scale",
        "Multi-model at scale",
        "120 models at 300k req/s under a 70 ms p99: share GPUs, route each request by model.",
        rate_rps=300_000,
        model_latency_ms=40,
        batch_window_ms=8,
        replicas=70,
        models_hosted=120,
        p99_target_ms=70,
        dynamic_batching=True,
        gpu=True,
    ),
)

SCENARIO_BY_ID: dict[str, Scenario] = {card.id: card for card in SCENARIOS}

WALKTHROUGH: tuple[WalkthroughStep, ...] = (
    WalkthroughStep(
        1,
        "Start small",
        "single-endpoint",
        "{rate} requests a second reach a {model_ms} model. What is the least you can deploy?",
        "One CPU replica. It serves up to {capacity} requests a second of this model, so it "
        "runs {utilization} busy and the p99 is {p99} against a {target} target. A batch window "
        "would only add waiting, and a GPU would sit idle.",
        "Begin with one replica and add machinery only when the numbers ask for it.",
    ),
    WalkthroughStep(
        2,
        "Batch before you buy",
        "batching",
        "Traffic grows to {rate} requests a second on {replicas} replicas. What is the cheapest "
        "lever before adding replicas?",
        "Dynamic batching. With this much concurrency, requests already overlap; collecting them "
        "for a few milliseconds lets one call serve several (about {batch} here), spreading the "
        "per-call overhead. The price is the window itself: every millisecond of it comes out of "
        "the p99, {p99} against a {target} target.",
        "Batching turns concurrency you already have into throughput, paid for in tail latency.",
    ),
    WalkthroughStep(
        3,
        "Heavy model, high rate",
        "gpu-autoscale",
        "The model now takes {model_ms} on a CPU worker and {rate} requests arrive each second. "
        "Where should it run?",
        "On GPUs behind an autoscaler. A heavy model that batches well is exactly what GPUs "
        "accelerate ({gpu_model_ms} per request on a GPU instance), and the autoscaler keeps the "
        "fleet matched to the load; here the p99 is {p99}. But a GPU is only worth its cost "
        "while batching keeps it busy; serving single requests on it wastes it.",
        "GPUs pay off only when batches keep them full.",
    ),
    WalkthroughStep(
        4,
        "Many versions",
        "registry-canary",
        "You now serve {models} models or versions. How do you ship a new one without risk?",
        "Keep versioned artifacts in a model registry that maps each name to its live version. "
        "The gateway routes by name and sends a small canary or A/B slice to the candidate, "
        "while shadow traffic tests it on real requests without serving its answers. Promote "
        "when the metrics agree; roll back by moving the split back.",
        "A release becomes a reversible traffic split, not a redeploy.",
    ),
    WalkthroughStep(
        5,
        "Scale out many models",
        "multi-model-scale",
        "{models} models, {rate} requests a second, and a {target} p99. How do you keep it "
        "affordable and fast?",
        "Pack several models onto each replica and GPU and route by model, so models that are "
        "idle share hardware instead of each holding its own. The tight target limits how long "
        "each model's batcher may wait and demands headroom in utilization, so the queue stays "
        "short: here {replicas} replicas give a p99 of {p99} against {target}.",
        "At scale, share hardware across models, send each request to a replica that holds its "
        "model, and let the p99 set the window and the headroom.",
        routed_answer=(
            "Share the GPUs, but route by model. Sent to every one of {replicas} replicas, each "
            "model's traffic splits so many ways that its batches stay small and the p99 is "
            "{p99} against {target}; and with every model everywhere, a GPU's memory cannot "
            "keep them all loaded. A model-aware router places each model on the fewest "
            "replicas its traffic needs, hot ones on many and cold ones on one, and sends each "
            "request only to a replica that holds its model: nothing waits for a load, and a "
            "model's batches collect its traffic on a few replicas instead of all of them. "
            "{placement} meets the target with {placement_replicas} replicas for "
            "{placement_cost}, against {dedicated_cost} for dedicated replicas per model."
        ),
    ),
)
