"""The Tail at scale page's inputs read back from URL text without ever raising, and the
``TailInputs`` they make.

The inputs are declared in ``sdlab_model.page_params`` (``TAIL_INPUTS``), each a ``TailInputs``
field with the model's range and default. URL keys are the names under the page's ``tail.``
prefix.
"""

from __future__ import annotations

from sdlab_model.page_params import TAIL_BY_NAME
from sdlab_model.tail import TailInputs
from sdlab_ui.page_inputs import changed_numbers, parse_numbers
from sdlab_ui.state import plain_text

INPUT_NAMES: tuple[str, ...] = tuple(TAIL_BY_NAME)
_DEFAULTS = {name: spec.default for name, spec in TAIL_BY_NAME.items()}


def default_values() -> dict:
    """Every input at its default."""
    return dict(_DEFAULTS)


def parse_params(given: dict[str, str]) -> tuple[dict, list[str]]:
    """Page values from URL text (missing: defaults). A value that is unreadable or out of range
    keeps its default, and so does a whole set the model refuses (a p95 below the p50); each
    with a notice. Never raises."""
    values, notices = parse_numbers(given, TAIL_BY_NAME, "Tail at scale")
    _, problem = build_inputs(values)
    if problem is not None:
        notices.append(f"{problem} The Tail at scale page starts from its defaults.")
        values = default_values()
    return values, notices


def url_values(values: dict) -> dict[str, str]:
    """The inputs that differ from their defaults, as URL text."""
    return changed_numbers(values, TAIL_BY_NAME)


def build_inputs(values: dict) -> tuple[TailInputs | None, str | None]:
    """The model's inputs from the page's values, or None and a reason a person can act on."""
    try:
        return TailInputs(**{name: values[name] for name in INPUT_NAMES}), None
    except ValueError as error:
        return None, f"These inputs cannot run: {plain_text(str(error))}."
