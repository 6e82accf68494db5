"""What the lab's claims rest on: source-backed rules, teaching assumptions, tradeoffs, formulas.

The four rules and three assumptions are the facts of the original Model Serving lab
(``ORIGINAL_LAB``; its model is described in docs/teaching_model.md), restated in our words; each
assumption says how sdlab's queueing model refines it. ``TRADEOFFS`` has one entry per design
decision in ``sdlab_model.design`` (same ids). ``FORMULAS`` are LaTeX for the Tradeoffs page, each
with the reference it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A durable system-design claim and the public source behind it."""

    id: str
    title: str
    source_name: str
    url: str
    summary: str


@dataclass(frozen=True)
class TeachingAssumption:
    """A simplification of the teaching model and how the queueing model refines it."""

    id: str
    title: str
    teaching: str
    queueing_refinement: str


@dataclass(frozen=True)
class Tradeoff:
    """What one design decision buys, what it costs, and when to take it."""

    decision_id: str
    title: str
    gain: str
    cost: str
    when: str


@dataclass(frozen=True)
class PublicPage:
    """A public web page and where its source lives."""

    title: str
    site: str
    url: str
    source_url: str


@dataclass(frozen=True)
class Formula:
    """One formula for display (LaTeX), what it says, and where it comes from."""

    id: str
    title: str
    latex: str
    explanation: str
    reference: str


ORIGINAL_LAB = PublicPage(
    title="Model Serving lab",
    site="System Design Lab",
    url="https://lab.zichaoyang.com/system-design/model-serving/",
    source_url="https://github.com/yangzichao/lab",
)
ORIGINAL_LAB_CITATION = (
    f'the {ORIGINAL_LAB.title} of the "{ORIGINAL_LAB.site}" site ({ORIGINAL_LAB.url}; source in '
    f"the yangzichao/lab repository, {ORIGINAL_LAB.source_url})"
)

SOURCES: tuple[Source, ...] = (
    Source(
        "triton-batching",
        "Dynamic batching trades latency for accelerator throughput",
        "NVIDIA Triton Inference Server",
        "https://github.com/triton-inference-server/server",
        "Triton's dynamic batcher holds individual requests for up to a configured delay and "
        "runs them together as one batch, so each kernel launch and weight read serves many "
        "requests. Throughput rises; the delay, and the wait behind a larger batch, is added "
        "to every request's latency.",
    ),
    Source(
        "tf-serving-versions",
        "A serving system should version models and serve them behind a stable name",
        "TensorFlow Serving",
        "https://www.tensorflow.org/tfx/guide/serving",
        "TensorFlow Serving loads model versions from a model store and can serve several "
        "versions of one model at once behind the same name, so traffic can move from one "
        "version to the next without restarting or redeploying the server.",
    ),
    Source(
        "kserve-rollout",
        "KServe provides canary rollout and autoscaling for inference",
        "KServe",
        "https://kserve.github.io/website/",
        "KServe is a control plane for model serving on Kubernetes: it splits traffic between "
        "a stable and a canary revision of a model and scales replicas with the request load, "
        "down to zero when idle, so the fleet follows demand.",
    ),
    Source(
        "tail-at-scale",
        "Tail latency, not the mean, governs interactive serving SLAs",
        "The Tail at Scale (Dean & Barroso, CACM 2013)",
        "https://research.google/pubs/the-tail-at-scale/",
        "When a response waits on many servers, or many requests make one session, the slowest "
        "few percent decide what users feel. Capacity and batching must therefore be sized "
        "against the 99th percentile, not the average latency.",
    ),
)

TEACHING_ASSUMPTIONS: tuple[TeachingAssumption, ...] = (
    TeachingAssumption(
        "replica-budget",
        "Per-replica capacity is a budget",
        "A CPU replica serves a fixed number of inferences a second (1,000 for a 15 ms model), "
        "a GPU replica eight times more, and batching multiplies that by up to six when there "
        "is enough concurrent traffic; the gain grows with the window and with model latency, "
        "since heavier models amortize more overhead per batched call.",
        "A replica is a number of parallel servers (CPU workers or GPU model instances), so "
        "the fleet has replicas × slots servers. A batch of b requests costs "
        "S₁·(f + (1 − f)·b): a fixed share f paid once per call plus a per-request part. "
        "Capacity is what the servers clear on full batches, and batching helps only as much "
        "as the queue actually fills batches.",
    ),
    TeachingAssumption(
        "sqrt-relief",
        "The queueing penalty is relieved by √replicas",
        "p99 is compute time plus the batch window plus an M/M/1-like queueing penalty that "
        "grows near saturation, divided by the square root of the replica count to mimic a "
        "multi-server queue, and capped at eight model latencies.",
        "The fleet is solved as the multi-server queue it is: Erlang C gives the chance of "
        "waiting, and for deterministic service the exact M/D/c decay rate gives the tail of "
        "the wait. Near capacity the tail grows without bound and at capacity it is reported "
        "as unstable (∞), never as a capped number.",
    ),
    TeachingAssumption(
        "models-per-replica",
        "Many models need more replicas or packing",
        "One replica hot-loads about four models without thrashing; beyond that, more models "
        "call for more replicas or for packing several models per replica.",
        "The same rules apply: the model count drives the registry, canary and packing "
        "decisions in both models, and the recommendation reads the queueing model's own "
        "capacity and p99.",
    ),
)

TRADEOFFS: tuple[Tradeoff, ...] = (
    Tradeoff(
        "batching",
        "Dynamic batching",
        gain="Several requests per call: throughput per replica multiplies, cost per request "
        "falls.",
        cost="Every request may wait up to the window, and a full batch takes longer to run.",
        when="Traffic is concurrent enough to fill batches and the p99 target has room for "
        "the window.",
    ),
    Tradeoff(
        "hardware",
        "Hardware + autoscaling",
        gain="GPUs run a heavy model many times faster per call; an autoscaler keeps the fleet "
        "sized to the load.",
        cost="GPUs are expensive and wasted without batching; autoscaling adds cold starts and "
        "a control loop to tune.",
        when="The model is heavy and the rate high (thousands of requests a second), or the "
        "fleet is too large to size by hand.",
    ),
    Tradeoff(
        "registry",
        "Model registry",
        gain="Versioned artifacts and a name-to-version map: reproducible deploys and instant "
        "rollback.",
        cost="Another service to run, and a discipline of publishing every model through it.",
        when="More than one model or version is live.",
    ),
    Tradeoff(
        "rollout",
        "A/B + canary rollout",
        gain="A new version meets real traffic in a small slice, and shadow traffic tests it "
        "without risk; rollback is a routing change.",
        cost="Two versions consume capacity at once, and someone must read the metrics before "
        "promoting.",
        when="Releases are frequent or risky, or several versions must be compared on live "
        "traffic.",
    ),
    Tradeoff(
        "packing",
        "Multi-model packing",
        gain="Idle models share hardware instead of each holding its own replicas.",
        cost="Models compete for memory and compute; loading a cold model adds latency; routing "
        "must know where each model lives.",
        when="There are more models than replicas can keep loaded, or many models with little "
        "traffic each.",
    ),
    Tradeoff(
        "latency_tradeoff",
        "p99 vs throughput",
        gain="Running hotter and batching longer serves more requests with the same hardware.",
        cost="Each millisecond of window and each point of utilization near saturation is paid "
        "in tail latency.",
        when="Always a choice: a tight target caps the window and demands utilization "
        "headroom; a loose one can be spent on throughput.",
    ),
)

FORMULAS: tuple[Formula, ...] = (
    Formula(
        "teaching-p99",
        "The teaching model's p99",
        r"p_{99} = L + W\,[\text{batching}] + \min\!\left(\frac{L\,\rho}{\sqrt{R}\,"
        r"\bigl(1-\min(0.99,\rho)\bigr)},\; 8L\right),\qquad "
        r"\rho = \frac{\lambda}{R\,\mu_{\text{replica}}}",
        "Compute time, plus the batch window when batching is active, plus an M/M/1-like "
        "queueing penalty divided by √R and capped at 8L. A heuristic, not a queueing result.",
        f"The budget model of {ORIGINAL_LAB_CITATION}; described in docs/teaching_model.md.",
    ),
    Formula(
        "erlang-c",
        "Erlang C: the chance a request waits",
        r"C(c, a) = \frac{\dfrac{a^{c}}{c!}\,\dfrac{c}{c-a}}"
        r"{\displaystyle\sum_{k=0}^{c-1}\frac{a^{k}}{k!} + \frac{a^{c}}{c!}\,\frac{c}{c-a}},"
        r"\qquad a = \lambda S,\ a < c",
        "With c servers and offered load a = λS, the probability that an arriving request finds "
        "every server busy. Computed stably through the Erlang B recursion "
        "B(k) = a·B(k−1) / (k + a·B(k−1)), then C = B(c) / (1 − ρ(1 − B(c))).",
        "A. K. Erlang (1917); L. Kleinrock, Queueing Systems, Vol. 1 (Wiley, 1975), §3.5.",
    ),
    Formula(
        "mdc-decay",
        "M/D/c: how fast the waiting-time tail decays",
        r"P(W_q > t) \approx C\,e^{-\eta t},\qquad \eta S = c\,\ln\!\left(1 + "
        r"\frac{\eta}{\lambda}\right)",
        "For deterministic service S on c servers, the wait beyond t decays exponentially at "
        "the rate η that solves this equation; the p99 wait follows by solving C·e^(−ηt) = 1%. "
        "M/M/c, which assumes exponential service, overstates this tail.",
        'J. Abate, G. L. Choudhury, W. Whitt, "Exponential approximations for tail '
        'probabilities in queues, I: waiting times", Operations Research 43(5):885–901, 1995; '
        'G. J. Franx, "A simple solution for the M/D/c waiting time distribution", '
        "Operations Research Letters 29(5):221–229, 2001.",
    ),
    Formula(
        "affine-batch",
        "Affine batch cost",
        r"S(b) = S_1\,\bigl(f + (1-f)\,b\bigr),\qquad "
        r"\text{capacity} = c\,\frac{B}{S(B)}",
        "A batch of b requests pays a fixed share f of a single call once (launches, weight "
        "reads) and the rest per request; with c servers each running full batches of B, that "
        "bounds the sustainable rate.",
        'D. Crankshaw et al., "Clipper: a low-latency online prediction serving system", '
        "NSDI 2017 (batch latency roughly linear in batch size); NVIDIA Triton dynamic batcher "
        "documentation.",
    ),
)

TRADEOFF_BY_DECISION: dict[str, Tradeoff] = {entry.decision_id: entry for entry in TRADEOFFS}
