"""Hostile URL values on the pages added this round: every one renders, with notices, never a
traceback (the Timeline's ``tl.*`` inputs, the Models and memory inputs, a pinned design A)."""

from __future__ import annotations

import pytest
from apptest_helpers import assert_no_exception, open_app

from sdlab_model.page_params import TIMELINE_INPUTS

TIMELINE_PAGE = "app_pages/timeline.py"
RESIDENCY_PAGE = "app_pages/residency.py"
HOSTILE_VALUES = ("nan", "-inf", "1e999", "-1e400", "", "0x10", "١٢", "9" * 400, "<b>x</b>")


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_every_timeline_input_at_a_hostile_value_renders(value):
    query = {f"tl.{field.name}": value for field in TIMELINE_INPUTS}
    query |= {"tl.traffic": value, "tl.scaler": value}
    app = open_app(query, page=TIMELINE_PAGE)
    assert_no_exception(app)
    assert app.warning, f"tl.*={value!r} was not taken as given, yet no notice says so"


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_every_residency_input_at_a_hostile_value_renders(value):
    names = ("model_size_gb", "activation_reserve_gb", "load_gb_per_s", "load_overhead_ms")
    query = {"gpu": "1", "models_hosted": "40", **{name: value for name in names}}
    query |= {"accelerator": value, "model_sizes_gb": value}
    app = open_app(query, page=RESIDENCY_PAGE)
    assert_no_exception(app)
    assert app.warning, f"residency inputs={value!r} not taken as given, yet no notice says so"


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_a_pinned_design_with_hostile_values_renders(value):
    app = open_app({"a": value, "a.rate_rps": value, "a.lb_policy": value, "a.gpu": value})
    assert_no_exception(app)
    assert any("Pinned design A" in w.value for w in app.warning), (
        f"a.*={value!r}: no notice about design A"
    )
