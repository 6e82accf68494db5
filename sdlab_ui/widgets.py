"""How a declared input (``sdlab_model.params``) becomes a widget, on every page: log-spaced
readable options and short labels for sliders, and the one builder that draws each kind.

Log-scale inputs span up to six decades (1 to 500,000 req/s), which a linear slider cannot show:
the first percent of its track would hold every value below 5,000. A select slider over a ladder
of readable numbers (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8 per decade) gives each decade the same
width. The ladder always holds the input's ends, its default, the scenario cards' values and the
current value, so any state a card, a link or a file sets shows exactly, never snapped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

import streamlit as st

from sdlab_model.params import ChoiceInput, NumericInput

_LADDER_MANTISSAS = ("1", "1.2", "1.5", "2", "2.5", "3", "4", "5", "6", "7", "8")


def show_value(key: str, value: Any) -> None:
    """Make the widget ``key``, drawn next, show ``value``: a view of the canonical state.

    Written only when the widget holds something else: every write goes to the browser as a
    one-shot update that it draws again, where an unchanged widget is kept as it is.
    """
    if st.session_state.get(key, _NOTHING) != value:
        st.session_state[key] = value


_NOTHING = object()


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
    values = set(_ladder(spec))
    values.update(v for v in extra_values if low <= v <= high)
    if spec.integer:
        return tuple(sorted({round(v) for v in values}))
    return tuple(sorted(values))


@lru_cache(maxsize=64)
def _ladder(spec: NumericInput) -> frozenset[float]:
    """The input's readable values, its ends and its default (a new value off the ladder
    rebuilds only what it adds)."""
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
    return frozenset(values)


def option_labels(spec: NumericInput, options: tuple[float | int, ...]) -> dict[float, str]:
    """Each option's ``format_value`` label, for a select slider's ``format_func``
    (``option_labels(...).__getitem__``); it may label more values than ``options``. Shared:
    never mutate it.

    Streamlit calls ``format_func`` on every option of every select slider on every rerun: a
    Python function per option cost ~0.2 ms per slider per rerun, a dictionary lookup (a C call)
    about a tenth of that.
    """
    return _option_labels(spec, options)


@lru_cache(maxsize=512)
def _option_labels(spec: NumericInput, options: tuple[float | int, ...]) -> dict[float, str]:
    labels = _ladder_labels(spec)
    extra = {option: format_value(spec, option) for option in options if option not in labels}
    return {**labels, **extra} if extra else labels


@lru_cache(maxsize=64)
def _ladder_labels(spec: NumericInput) -> dict[float, str]:
    return {value: format_value(spec, value) for value in _ladder(spec)}


def format_value(spec: NumericInput, value: float) -> str:
    """A short label: 1.5k req/s, 20 ms, 0.833, 8x."""
    number = float(value)
    if spec.integer or number == int(number):
        if abs(number) >= 10_000:
            text = f"{number / 1000:g}k"
        else:
            text = f"{int(number):,}" if number == int(number) else f"{number:g}"
    elif abs(number) >= 10_000:  # a linked or typed value between the ladder's steps
        text = f"{number / 1000:.3g}k"
    elif abs(number) >= 100:  # 1,598, where three digits in general format read 1.6e+03
        text = f"{number:,.0f}"
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


def input_label(spec: NumericInput) -> str:
    """The widget's label: the unit in brackets, except a multiplier's "x"."""
    return f"{spec.label} ({spec.unit})" if spec.unit and spec.unit != "x" else spec.label


def numeric_widget(
    spec: NumericInput,
    key: str,
    value: float | None = None,
    on_change: Callable[..., None] | None = None,
    args: tuple[Any, ...] = (),
    extra_values: Iterable[float] = (),
) -> float | int:
    """Draw ``spec``: a typed box where it has a step, else a slider on its scale.

    With ``value`` the widget is a view of that canonical value (``on_change`` writes changes
    back); without, it keeps its own state from the default. ``extra_values`` join a log
    slider's ladder so they show exactly.
    """
    own = value is None
    start = spec.default if own else value
    number = (int if spec.integer else float) if spec.step is not None else type(start)
    start = number(start) if spec.scale == "linear" else start
    common = {"key": key, "help": spec.help or None, "on_change": on_change, "args": args}
    if own:
        common["value"] = start
    else:  # set before drawing, never with value=: the canonical state wins every run
        show_value(key, start)
    if spec.step is not None:
        extra = {"format": f"%.{spec.decimals}f"} if spec.decimals is not None else {}
        return st.number_input(
            input_label(spec),
            min_value=number(spec.minimum),
            max_value=number(spec.maximum),
            step=number(spec.step),
            **extra,
            **common,
        )
    if spec.scale == "log":
        options = log_options(spec, (*extra_values, start))
        return st.select_slider(
            input_label(spec),
            options,
            format_func=option_labels(spec, options).__getitem__,
            **common,
        )
    return st.slider(
        input_label(spec),
        min_value=number(spec.minimum),
        max_value=number(spec.maximum),
        step=number(linear_step(spec)),
        format=slider_format(spec),
        **common,
    )


def choice_widget(
    spec: ChoiceInput,
    key: str,
    value: str,
    on_change: Callable[..., None] | None = None,
    args: tuple[Any, ...] = (),
) -> str:
    """Draw ``spec`` as a select box, a view of the canonical ``value`` (as ``numeric_widget``)."""
    show_value(key, value)
    return st.selectbox(
        spec.label,
        spec.choices,
        key=key,
        help=spec.help or None,
        format_func=spec.label_of,
        on_change=on_change,
        args=args,
    )
