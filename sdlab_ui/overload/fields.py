"""The Overload page's inputs read back from URL text without ever raising, and the
``OverloadPolicy`` they make.

The inputs are declared in ``sdlab_model.page_params`` (``OVERLOAD_INPUTS``); URL keys are their
names under the page's ``overload.`` prefix. A zero limit, deadline or budget means none, as
Triton reads its own zeros.
"""

from __future__ import annotations

from sdlab_model.overload import OverloadPolicy
from sdlab_model.page_params import OVERLOAD_BY_NAME
from sdlab_ui.page_inputs import changed_numbers, parse_numbers
from sdlab_ui.state import plain_text

PAGE = "Overload"
_DEFAULTS = {name: spec.default for name, spec in OVERLOAD_BY_NAME.items()}


def default_values() -> dict:
    """Every input at its default."""
    return dict(_DEFAULTS)


def parse_params(given: dict[str, str]) -> tuple[dict, list[str]]:
    """Page values from URL text (missing: defaults); a value unreadable or out of range keeps
    its default, with a notice. Never raises."""
    values, notices = parse_numbers(given, OVERLOAD_BY_NAME, PAGE)
    _, problem = build_policy(values)
    if problem is not None:
        notices.append(f"{problem} The {PAGE} page starts from its defaults.")
        values = default_values()
    return values, notices


def url_values(values: dict) -> dict[str, str]:
    """The inputs that differ from their defaults, as URL text."""
    return changed_numbers(values, OVERLOAD_BY_NAME)


def build_policy(values: dict) -> tuple[OverloadPolicy | None, str | None]:
    """The policy the page's values make, or None and a reason a person can act on."""
    try:
        limit = int(values["queue_limit"])
        deadline = float(values["deadline_ms"])
        budget = float(values["retry_budget_percent"])
        policy = OverloadPolicy(
            queue_limit=limit or None,
            deadline_ms=deadline or None,
            max_retries=int(values["max_retries"]),
            retry_budget=budget / 100.0 if budget else None,
        )
    except (KeyError, TypeError, ValueError) as error:
        return None, f"These settings cannot run: {plain_text(str(error))}."
    return policy, None
