"""A page's own inputs, kept under ``prefix.*`` in the session and in the URL (the LLM and Tail
at scale pages; the Lab's workload is ``state``'s).

The values are a canonical dict in session state, as ``state`` keeps the lab's workload; each
widget is a view of one value whose ``on_change`` (``PageInputs.set_from_widget``) writes it
back. The URL holds the values that differ from their defaults; it is read on a session's first
run and on Back/Forward (``state.url_loads``), with a notice for each value not taken as given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st

from sdlab_model.params import NumericInput
from sdlab_ui import state
from sdlab_ui.widgets import input_label, numeric_widget

Parse = Callable[[dict[str, str]], tuple[dict, list[str]]]


@dataclass(frozen=True)
class PageInputs:
    """One page's values in the session; ``parse`` turns its URL parameters into values and
    notices."""

    prefix: str
    parse: Parse

    @property
    def widget(self) -> str:
        """Widget keys: this and the input's name."""
        return f"{self.prefix}.widget."

    def current(self) -> dict:
        """The page's values: from the URL on a session's first run and after Back/Forward."""
        loads = state.url_loads()
        values_key, loaded_key = f"{self.prefix}.values", f"{self.prefix}.loaded_at"
        if st.session_state.get(loaded_key) != loads or values_key not in st.session_state:
            values, notices = self.parse(state.page_params(self.prefix))
            st.session_state[values_key] = values
            st.session_state[loaded_key] = loads
            st.session_state[f"{self.prefix}.notices"] = tuple(notices)
        return dict(st.session_state[values_key])

    def replace(self, values: dict) -> None:
        """Make ``values`` the page's values; clears notices."""
        st.session_state[f"{self.prefix}.values"] = dict(values)
        st.session_state[f"{self.prefix}.notices"] = ()

    def set_from_widget(self, name: str) -> None:
        """A widget's ``on_change``: its value becomes input ``name``'s."""
        values = st.session_state[f"{self.prefix}.values"]
        self.replace({**values, name: st.session_state[self.widget + name]})

    def number_row(self, specs: dict[str, NumericInput], names: Sequence[str] = ()) -> dict:
        """Draw the inputs ``names`` (all of ``specs`` if none) in one row, each a view of its
        value; put the values that differ from their defaults in the URL; the page's values."""
        values = self.current()
        names = tuple(names) or tuple(specs)
        for column, name in zip(st.columns(len(names)), names, strict=True):
            with column:
                numeric_widget(
                    specs[name], self.widget + name, values[name], self.set_from_widget, (name,)
                )
        values = self.current()
        state.set_page_params(self.prefix, changed_numbers(values, specs))
        return values

    def show_notices(self) -> None:
        """What the URL asked for that the page could not take as given, until the next change."""
        self.current()  # a session's first run reads the URL, and its notices, here
        notices = st.session_state.get(f"{self.prefix}.notices", ())
        for notice in notices[: state.MAX_NOTICES_SHOWN]:
            st.warning(notice, icon=":material/warning:")
        if len(notices) > state.MAX_NOTICES_SHOWN:
            st.warning(
                f"… and {len(notices) - state.MAX_NOTICES_SHOWN} more notices like these, "
                "not shown.",
                icon=":material/warning:",
            )


def parse_number(
    field: NumericInput, text: str, page: str
) -> tuple[float | int | None, str | None]:
    """A URL value for ``field`` as a number within its range, or None and a notice naming
    ``page`` (the visitor's text quoted only as a short plain excerpt)."""
    shown, label = state.plain_text(str(text)[:30]), input_label(field)
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        return None, f"{page} {label}: {shown} is not a number; kept the default."
    if not field.minimum <= number <= field.maximum:
        return None, (
            f"{page} {label}: {shown} is outside {field.minimum:g} to {field.maximum:g}; "
            "kept the default."
        )
    return (round(number) if field.integer else number), None


def parse_numbers(
    given: dict[str, str], specs: dict[str, NumericInput], page: str, key_prefix: str = ""
) -> tuple[dict, list[str]]:
    """The values of ``specs`` from URL text (missing: their defaults): a value unreadable or out
    of range keeps its default and an unknown name is ignored, each with a notice naming
    ``page`` (and the URL key's ``key_prefix``). Never raises."""
    values, notices = {name: spec.default for name, spec in specs.items()}, []
    for name, text in given.items():
        if name not in specs:
            notices.append(
                f"Ignored unknown {page} setting {key_prefix}{state.plain_text(name[:30])}."
            )
            continue
        number, notice = parse_number(specs[name], text, page)
        if notice is None:
            values[name] = number
        else:
            notices.append(notice)
    return values, notices


def changed_numbers(values: dict, specs: dict[str, NumericInput]) -> dict[str, str]:
    """The values that differ from their defaults, as URL text."""
    return {name: f"{value:.6g}" for name, value in values.items() if value != specs[name].default}
