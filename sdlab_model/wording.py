"""Words the model's reasons share with the pages: a count or a price reads the same everywhere."""

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
