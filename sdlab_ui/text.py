"""Numbers as a person reads them, in every page's text, hover and report: milliseconds, request
rates, replica counts and dollars (the ones the model's sentences share live in
``sdlab_model.wording``)."""

from __future__ import annotations

import math

from sdlab_model.wording import count, money, ms_text, rate_number, rate_text

# The model's words (a time, a rate, dollars) and the pages' own, from one module.
__all__ = [
    "count",
    "money",
    "ms_delta_text",
    "ms_text",
    "per_million_text",
    "rate_number",
    "rate_text",
    "replicas_text",
    "usd_delta_text",
    "usd_per_million_text",
]


def ms_delta_text(delta_ms: float) -> str:
    """A change in milliseconds, B − A: '+12.3 ms', '-1.20 s', 'same', and 'under 0.01 ms more'
    (or less) where it rounds to nothing."""
    if not math.isfinite(delta_ms):
        return "—"
    if delta_ms == 0:
        return "same"
    if abs(delta_ms) < 0.01:
        return "under 0.01 ms " + ("more" if delta_ms > 0 else "less")
    return ("+" if delta_ms > 0 else "-") + ms_text(abs(delta_ms))


def replicas_text(replicas: float) -> str:
    """'1 replica', '12 replicas'; '' where there is no count (a gap in a line, never hovered)."""
    return count(replicas, "replica") if math.isfinite(replicas) else ""


def usd_delta_text(delta_usd: float, unit: str = "") -> str:
    """A change in dollars, B − A: '+$1.43/h', '-$0.50', 'same', and 'under $0.01 more' (or less)
    where it rounds to nothing, so two prices shown as '<$0.01' never differ by '+0.00'."""
    if not math.isfinite(delta_usd):
        return ""
    if delta_usd == 0:
        return "same"
    if abs(delta_usd) < 0.01:
        return f"under $0.01{unit} " + ("more" if delta_usd > 0 else "less")
    return ("+" if delta_usd > 0 else "-") + money(abs(delta_usd)) + unit


def usd_per_million_text(usd_per_million: float) -> str:
    """A price per million inferences to the cent: '$3.97', or '<$0.01' where it rounds to 0."""
    return "<$0.01" if usd_per_million < 0.01 else money(usd_per_million)


def per_million_text(usd_per_million: float, serves: bool, unit: str = "per 1M") -> str:
    """'$3.97 per 1M', '<$0.01 per 1M', or 'no price per 1M over capacity' where the fleet cannot
    serve the rate: the offered rate spread over its price would read as nearly free."""
    if not serves:
        return f"no price {unit} over capacity"
    return f"{usd_per_million_text(usd_per_million)} {unit}"
