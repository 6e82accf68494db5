"""The lab's URL: its query parameters written from a workload and read back, never raising.

The URL holds the lab, short: only the inputs that differ from their defaults, each to six
significant digits (``?rate_rps=3000&replicas=4&gpu=1``); the default lab names just its model
(``?model=queueing``), so a lab's URL is never bare. It is read through ``Workload.from_strings``,
the tolerant parser: anything a person can type yields a valid lab plus notices.

A design pinned for comparison ("A", the current lab being "B") rides in the same URL: ``a=1``
marks it and ``a.<input>=<value>`` holds each of its inputs that differs from the default
(``?replicas=12&a=1&a.replicas=10``), so a shared link reopens both designs.

Page parameters: a page may keep its own inputs in the URL under dotted keys, ``prefix.name``
(the Timeline page's ``tl.traffic=spike``). The workload parser never sees them; the URL keeps
them beside the lab's (``state.page_params``, ``state.set_page_params``).
"""

from __future__ import annotations

import re
from typing import cast
from urllib.parse import urlencode

from sdlab_model.assessment import ModelName
from sdlab_model.params import (
    ACCELERATOR_PARAM,
    DEFAULT_MODEL,
    MODEL_CHOICES,
    MODEL_SIZES_PARAM,
    RESIDENCY_BY_NAME,
)
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.workload import Workload

PAGE_PARAM_SEPARATOR = "."
PAGE_PARAM_PREFIXES = ("tl", "llm", "tail", "overload", "priority", "fallback", "burst")
"""Pages that keep inputs in the URL: the Timeline page (``tl.``), the LLM page (``llm.``), the
Tail at scale page (``tail.``) and the Overload page (``overload.``, ``priority.``,
``fallback.``, ``burst.``).
Other dotted keys are unknown settings like any other, with a notice."""
_PAGE_PARAM = re.compile(rf"^(?:{'|'.join(PAGE_PARAM_PREFIXES)})\.[a-z0-9_]{{1,40}}$")
MODEL_PARAM = "model"
PIN_PARAM = "a"
"""Marks a pinned design A in the URL; its inputs follow as ``a.<input>``."""
PIN_PREFIX = PIN_PARAM + "."
URL_SIGNIFICANT_DIGITS = 6
"""Digits of a number in the URL: every value a slider or card sets prints exactly in six."""
_DEFAULT_STRINGS = Workload().to_strings()
_DEFAULT_RESIDENCY_STRINGS = ResidencyInputs().to_strings()
RESIDENCY_PARAMS: tuple[str, ...] = (*RESIDENCY_BY_NAME, ACCELERATOR_PARAM, MODEL_SIZES_PARAM)
"""URL keys of the residency inputs (the Models and memory page's), read apart from the workload."""


def url_params(
    workload: Workload,
    model: str,
    residency: ResidencyInputs | None = None,
    pinned: Workload | None = None,
) -> dict[str, str]:
    """The lab's query parameters: only what differs from the defaults, each in short text.

    ``residency`` (the Models and memory inputs) adds its own keys the same way.

    The model is named where it is not the default, or where nothing else is (the default lab).
    ``Workload.from_strings`` reads them back (a missing key is its default). A number is written
    to ``URL_SIGNIFICANT_DIGITS`` digits, so ``0.29000000000000004`` from a slider reads ``0.29``.
    A pinned design A follows as ``a=1`` and ``a.<input>`` for its inputs off their defaults.
    """
    params = _differences(workload)
    if residency is not None:
        params.update(
            (name, text if name == MODEL_SIZES_PARAM else _url_text(text))
            for name, text in residency.to_strings().items()
            if text != _DEFAULT_RESIDENCY_STRINGS[name]
        )
    if model != DEFAULT_MODEL or not params:
        params[MODEL_PARAM] = model  # the default lab too: a lab's URL is never bare
    if pinned is not None:
        params[PIN_PARAM] = "1"
        params.update({PIN_PREFIX + name: text for name, text in _differences(pinned).items()})
    return params


def _differences(workload: Workload) -> dict[str, str]:
    return {
        name: _url_text(text)
        for name, text in workload.to_strings().items()
        if text != _DEFAULT_STRINGS[name]
    }


def link_query(workload: Workload, model: str, residency: ResidencyInputs | None = None) -> str:
    """The lab's query string as the address bar shows it (``?rate_rps=3000``)."""
    return "?" + urlencode(url_params(workload, model, residency))


def _url_text(exact: str) -> str:
    try:
        number = float(exact)
    except ValueError:  # a choice's name
        return exact
    if number == int(number):
        return str(int(number))
    return f"{number:.{URL_SIGNIFICANT_DIGITS}g}"


def parse_query_params(values: dict[str, list[str]]) -> tuple[Workload, ModelName, tuple[str, ...]]:
    """Workload, model and notices from query parameters; never raises.

    A pinned design's parameters (``a``, ``a.<input>``) are ``parse_pinned``'s and a page's own
    dotted ones (``tl.<input>``) the page's, not read here.
    """
    own = {
        key: value
        for key, value in values.items()
        if not _is_pin_key(key) and not is_page_param(key)
    }
    workload, notices = Workload.from_strings(own, ignore=(MODEL_PARAM, *RESIDENCY_PARAMS))
    model: str = DEFAULT_MODEL
    given = values.get(MODEL_PARAM) or []
    if given:
        wanted = str(given[-1]).strip().lower()
        if wanted in MODEL_CHOICES:
            model = wanted
        else:
            notices += (
                f"Model {wanted[:40]!r} is not one of {', '.join(MODEL_CHOICES)}; "
                f"used {DEFAULT_MODEL}.",
            )
    return workload, cast(ModelName, model), notices


def parse_pinned(values: dict[str, list[str]]) -> tuple[Workload | None, tuple[str, ...]]:
    """Design A from the ``a.<input>`` query parameters (None without ``a``); never raises.

    Its notices say they are about design A. ``a.<input>`` keys without ``a`` are reported and
    otherwise ignored, so a truncated link never pins a design by accident.
    """
    inputs = {
        str(key)[len(PIN_PREFIX) :]: value
        for key, value in values.items()
        if str(key).startswith(PIN_PREFIX)
    }
    if PIN_PARAM not in values:
        if not inputs:
            return None, ()
        return None, ("Ignored design A's settings: the link has no a=1 to pin a design.",)
    workload, notices = Workload.from_strings(inputs)
    return workload, tuple(f"Pinned design A: {notice}" for notice in notices)


def _is_pin_key(key: object) -> bool:
    return key == PIN_PARAM or str(key).startswith(PIN_PREFIX)


def is_page_param(key: object) -> bool:
    return bool(_PAGE_PARAM.match(str(key)))
