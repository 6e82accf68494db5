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


def rate_text(rate_rps: float) -> str:
    """Requests per second for a person: 850 req/s, 8.3k req/s, 1.2M req/s."""
    number = rate_number(rate_rps)
    return number if number == "∞" else f"{number} req/s"


def rate_number(rate_rps: float) -> str:
    """``rate_text`` without its unit, for a column whose heading gives it: 850, 8.3k, 1.2M."""
    if not math.isfinite(rate_rps):
        return "∞"
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if rate_rps >= scale:
            return f"{rate_rps / scale:.3g}{suffix}"
    return f"{rate_rps:.3g}"
