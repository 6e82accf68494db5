"""Words the model's reasons share with the pages: a count, a price or a time reads the same
everywhere."""

from __future__ import annotations

import math


def count(number: float, noun: str) -> str:
    """'1 replica', '1,024 models': a whole count and its noun, singular for one."""
    return f"{number:,.0f} {noun}" + ("" if number == 1 else "s")


def money(usd: float) -> str:
    """Dollars as a person reads them: cents below $100, whole dollars above; '—' for none."""
    if not math.isfinite(usd):
        return "—"
    return f"${usd:,.2f}" if usd < 100 else f"${usd:,.0f}"


def ms_text(value_ms: float | None) -> str:
    """Milliseconds for a person: 12.3 ms, 1.20 s, 25 s, '<0.01 ms', 'unstable (∞)'; '—' for
    none (None or NaN)."""
    if value_ms is None or math.isnan(value_ms):
        return "—"
    if not math.isfinite(value_ms):
        return "unstable (∞)"
    if value_ms >= 10_000:
        return f"{value_ms / 1000:,.0f} s"
    if value_ms >= 1_000:
        return f"{value_ms / 1000:.2f} s"
    if 0 < value_ms < 0.01:  # a wait of 6e-10 ms is no wait a person can read
        return "<0.01 ms"
    return f"{value_ms:.3g} ms" if value_ms < 100 else f"{value_ms:.0f} ms"
