"""How one numeric input becomes a slider: log-spaced readable options and short labels.

Log-scale inputs span up to six decades (1 to 500,000 req/s), which a linear slider cannot show:
the first percent of its track would hold every value below 5,000. A select slider over a ladder
of readable numbers (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8 per decade) gives each decade the same
width. The ladder always holds the input's ends, its default, the scenario cards' values and the
current value, so any state a card, a link or a file sets shows exactly, never snapped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache

from sdlab_model.params import NumericInput

_LADDER_MANTISSAS = ("1", "1.2", "1.5", "2", "2.5", "3", "4", "5", "6", "7", "8")


def log_options(spec: NumericInput, extra_values: Iterable[float] = ()) -> tuple[float | int, ...]:
    """Sorted readable values from ``spec.minimum`` to ``spec.maximum`` on a log ladder.

    ``extra_values`` (default, card values, the current value) are added when inside the range.
    """
    return _log_options(spec, tuple(float(v) for v in extra_values))


# Every rerun of every page draws each log slider from its ladder: kept, not rebuilt (~0.5 ms a
# rerun for the sidebar's twelve). Keyed by the extra values, which change only with the state.
@lru_cache(maxsize=512)
def _log_options(spec: NumericInput, extra_values: tuple[float, ...]) -> tuple[float | int, ...]:
    low, high = float(spec.minimum), float(spec.maximum)
    values: set[float] = {low, high, float(spec.default)}
    first_decade = math.floor(math.log10(max(low, 1e-12)))
    last_decade = math.ceil(math.log10(high))
    for decade in range(first_decade, last_decade + 1):
        for mantissa in _LADDER_MANTISSAS:
            # Built from text so 1.2e3 is exactly 1200.0, not 1200.0000000000002.
            value = float(f"{mantissa}e{decade}")
            if low <= value <= high:
                values.add(value)
    values.update(v for v in extra_values if low <= v <= high)
    if spec.integer:
        return tuple(sorted({round(v) for v in values}))
    return tuple(sorted(values))


def option_labels(spec: NumericInput, options: tuple[float | int, ...]) -> dict[float, str]:
    """Each option's ``format_value`` label, for a select slider's ``format_func``
    (``option_labels(...).__getitem__``). Shared: never mutate it.

    Streamlit calls ``format_func`` on every option of every select slider on every rerun: a
    Python function per option cost ~0.2 ms per slider per rerun, a dictionary lookup (a C call)
    about a tenth of that.
    """
    return _option_labels(spec, options)


@lru_cache(maxsize=512)
def _option_labels(spec: NumericInput, options: tuple[float | int, ...]) -> dict[float, str]:
    return {option: format_value(spec, option) for option in options}


def format_value(spec: NumericInput, value: float) -> str:
    """A short label: 1.5k req/s, 20 ms, 0.833, 8x."""
    number = float(value)
    if spec.integer or number == int(number):
        if abs(number) >= 10_000:
            text = f"{number / 1000:g}k"
        else:
            text = f"{int(number):,}" if number == int(number) else f"{number:g}"
    else:
        text = f"{number:.3g}"
    if spec.unit == "x":
        return f"{text}x"
    return f"{text} {spec.unit}" if spec.unit else text


def slider_format(spec: NumericInput) -> str:
    """The printf-style format of a linear slider's value: 5 ms, not 5.00.

    Decimals only where the slider's step makes them (a step of 1 shows none), then the unit.
    """
    number = "%d" if spec.integer else ("%.0f" if linear_step(spec) >= 1 else "%.2f")
    if spec.unit == "x":
        return f"{number}x"
    return f"{number} {spec.unit}" if spec.unit else number


def linear_step(spec: NumericInput) -> float:
    """A slider step giving about a hundred positions over the range."""
    if spec.integer:
        return 1
    span = float(spec.maximum) - float(spec.minimum)
    return 1.0 if span >= 50 else 0.01
