"""Words the model's reasons share with the pages, so a count reads the same everywhere."""

from __future__ import annotations


def count(number: float, noun: str) -> str:
    """'1 replica', '1,024 models': a whole count and its noun, singular for one."""
    return f"{number:,.0f} {noun}" + ("" if number == 1 else "s")
