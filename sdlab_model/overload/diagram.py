"""The Overload page's diagram: the Lab's request path (clients, gateway, server replicas) with
what the replicas shed leaving them, and the fallback model taking it when there is one.

Every number is a field of one ``FallbackResult`` (``fallback.with_fallback``) and the policy it
was computed under; this module only formats and lays them out, in the Lab diagram's styles
(``sdlab_model.architecture``), so the two diagrams read alike. ``share_text`` and ``ms_text``
(``sdlab_model.wording``) are the formats the page's numbers use too.
"""

from __future__ import annotations

import html
import math

import graphviz

from sdlab_model.architecture import (
    DETAIL_POINTS,
    FLOW_STYLE,
    NODE_STYLE,
    PATH_STYLE,
    styled_graph,
)
from sdlab_model.overload.fallback import FallbackResult
from sdlab_model.overload.policy import OverloadPolicy
from sdlab_model.wording import ms_text

OPTIMISTIC = " (optimistic)"
"""Said after the fallback path's p99: its queue is fed a Poisson overflow, and the real one is
burstier (the simulation's p99 was 26-55% higher wherever the fallback queued; docs)."""
LOST_WARNING_SHARE = 0.01
"""A path losing more than this share of requests is drawn amber; one that is unstable, red."""


def share_text(share: float) -> str:
    """A share as the page shows it: '0.12%', '33.3%', '—' where there is none."""
    if not math.isfinite(share):
        return "—"
    return f"{share:.2%}" if share < 0.01 else f"{share:.1%}"


def _shown(share: float) -> bool:
    """Whether a share reads as more than nothing (a rounding crumb is drawn as none)."""
    return share > 0 and share_text(share) != share_text(0.0)


def _html(text: object) -> str:
    return html.escape(str(text), quote=True)


def _label(title: str, lines: list[str]) -> str:
    detail = "<br/>".join(_html(line) for line in lines)
    return f'<<b>{_html(title)}</b><br/><font point-size="{DETAIL_POINTS}">{detail}</font>>'


def _policy_text(policy: OverloadPolicy) -> str:
    limit = "no queue limit" if policy.queue_limit is None else f"queue limit {policy.queue_limit}"
    deadline = (
        "no deadline" if policy.deadline_ms is None else f"deadline {policy.deadline_ms:g} ms"
    )
    return f"{limit} · {deadline}"


def _usd(value: float) -> str:
    return f"${value:,.2f}/h" if math.isfinite(value) else "price not given"


def node_lines(result: FallbackResult, policy: OverloadPolicy) -> dict[str, tuple[str, list[str]]]:
    """Node id -> (title, lines of numbers)."""
    r, primary, fb = result, result.primary, result.fallback
    turned_away = primary.rejected_share + primary.timed_out_share
    answered = r.primary_share + r.fallback_share
    replicas = [
        _policy_text(policy),
        f"load {primary.utilization:.0%}",
        f"answers {share_text(r.primary_share)} · p99 {ms_text(r.primary_p99_ms)}",
        f"{_usd(r.primary_usd_per_hour)}",
    ]
    lines = {
        "client": ("Clients", [f"{primary.fresh_rps:,.0f} req/s"]),
        "gateway": ("Inference gateway", [f"{primary.offered_multiple:.2f}× capacity"]),
        "replicas": ("Server replicas", replicas),
        "answered": (
            "Answered",
            [
                f"{share_text(answered)} · p99 {ms_text(r.answered_p99_ms)}",
                f"goodput {r.goodput_rps:,.0f} req/s",
            ],
        ),
        "lost": (
            "Lost",
            [
                f"{share_text(r.lost_share)}",
                f"rejected {share_text(primary.rejected_share)} · timed out "
                f"{share_text(primary.timed_out_share)}"
                if not fb.is_on
                else f"turned away by the primary {share_text(turned_away)}",
            ],
        ),
    }
    if fb.is_on:
        lines["fallback"] = (
            "Fallback model",
            [
                f"{fb.replicas} × {fb.workers_per_replica} workers · {fb.model_latency_ms:g} ms",
                f"answers {share_text(r.fallback_share)} · p99 {ms_text(r.fallback_p99_ms)}"
                + (OPTIMISTIC if r.fallback_share > 0 else ""),
                "load —"
                if math.isnan(r.fallback_utilization)
                else f"load {r.fallback_utilization:.0%}",
                _usd(r.fallback_usd_per_hour),
            ],
        )
    return lines


def _state(node: str, result: FallbackResult) -> str:
    primary = result.primary
    if node == "replicas":
        if not primary.is_stable:
            return "overloaded"
        return "warning" if _shown(primary.rejected_share + primary.timed_out_share) else "ok"
    if node == "fallback":
        if not result.fallback_is_stable:
            return "overloaded"
        return "warning" if result.fallback_utilization > 0.8 else "ok"
    if node == "lost":
        if result.lost_share > LOST_WARNING_SHARE:
            return "overloaded"
        return "warning" if _shown(result.lost_share) else "inactive"
    return "ok"


def overload_dot(result: FallbackResult, policy: OverloadPolicy) -> str:
    """DOT source of the request path with ``result``'s shares on its edges and nodes."""
    graph = styled_graph("overload", rankdir="LR", nodesep="0.3", ranksep="0.5")
    graph.attr("edge", fontname="Helvetica", fontsize=str(DETAIL_POINTS), fontcolor="#64748b")
    for node, (title, lines) in node_lines(result, policy).items():
        graph.node(node, label=_label(title, lines), **NODE_STYLE[_state(node, result)])
    path = dict(FLOW_STYLE["active"], **PATH_STYLE)
    graph.edge("client", "gateway", **path)
    graph.edge("gateway", "replicas", **path)
    graph.edge("replicas", "answered", label=_plain(share_text(result.primary_share)), **path)
    primary = result.primary
    lost_from_primary = result.lost_share
    if result.fallback.is_on:
        sent = result.overflow_rps / primary.fresh_rps if primary.fresh_rps > 0 else 0.0
        graph.edge(
            "replicas",
            "fallback",
            label=_plain(f"overflow {share_text(sent)}"),
            **FLOW_STYLE["warning" if _shown(sent) else "inactive"],
        )
        graph.edge(
            "fallback",
            "answered",
            label=_plain(share_text(result.fallback_share)),
            **FLOW_STYLE["active" if _shown(result.fallback_share) else "inactive"],
        )
        fallback_lost = max(0.0, sent - result.fallback_share)
        lost_from_primary = max(0.0, result.lost_share - fallback_lost)
        graph.edge(
            "fallback",
            "lost",
            label=_plain(share_text(fallback_lost)),
            **FLOW_STYLE["warning" if _shown(fallback_lost) else "inactive"],
        )
    graph.edge(
        "replicas",
        "lost",
        label=_plain(share_text(lost_from_primary)),
        **FLOW_STYLE["warning" if _shown(lost_from_primary) else "inactive"],
    )
    return graph.source


def _plain(text: str) -> str:
    return graphviz.nohtml(graphviz.escape(str(text)))
