"""The log-scale slider options (readable, complete, able to show any value exactly) and the
builder that draws every declared input."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sdlab_model import SCENARIOS
from sdlab_model.params import NUMERIC_INPUTS
from sdlab_ui.widgets import format_value, log_options, option_labels

_LOG_INPUTS = [spec for spec in NUMERIC_INPUTS if spec.scale == "log"]


def test_options_hold_ends_default_and_card_values():
    for spec in _LOG_INPUTS:
        cards = [getattr(card, spec.name) for card in SCENARIOS if hasattr(card, spec.name)]
        options = log_options(spec, cards)
        wanted = {spec.minimum, spec.maximum, spec.default, *cards}
        missing = [v for v in wanted if v not in options]
        assert not missing, f"{spec.name}: options lack {missing}"
        assert list(options) == sorted(set(options)), f"{spec.name}: options not sorted/unique"
        assert len(options) <= 80, f"{spec.name}: {len(options)} options is too many to step"


@given(st.data())
def test_any_value_in_range_is_an_option(data):
    spec = data.draw(st.sampled_from(_LOG_INPUTS))
    if spec.integer:
        value = data.draw(st.integers(int(spec.minimum), int(spec.maximum)))
    else:
        value = data.draw(st.floats(spec.minimum, spec.maximum, allow_nan=False))
    assert value in log_options(spec, [value]), f"{spec.name}={value!r} cannot be shown"


def test_labels_are_short_and_carry_units():
    rate = next(s for s in NUMERIC_INPUTS if s.name == "rate_rps")
    assert format_value(rate, 25_000) == "25k req/s", format_value(rate, 25_000)
    assert format_value(rate, 1_500) == "1,500 req/s", format_value(rate, 1_500)
    # Between the ladder's steps (a link, a typed value): never '1.6e+03 req/s'.
    assert format_value(rate, 1_598.4) == "1,598 req/s", format_value(rate, 1_598.4)
    assert format_value(rate, 15_984.4) == "16k req/s", format_value(rate, 15_984.4)
    assert format_value(rate, 207.3) == "207 req/s", format_value(rate, 207.3)
    assert format_value(rate, 12.34) == "12.3 req/s", format_value(rate, 12.34)
    speedup = next(s for s in NUMERIC_INPUTS if s.name == "gpu_speedup")
    assert format_value(speedup, 8) == "8x", format_value(speedup, 8)


def test_linear_sliders_show_their_unit_and_no_idle_decimals():
    from apptest_helpers import open_app

    from sdlab_model.params import NUMERIC_BY_NAME
    from sdlab_ui.sidebar import widget_key
    from sdlab_ui.widgets import slider_format

    window = NUMERIC_BY_NAME["batch_window_ms"]
    assert slider_format(window) == "%.0f ms", f"batch window shows {slider_format(window)!r}"
    share = NUMERIC_BY_NAME["cpu_batch_overhead_share"]
    assert slider_format(share) == "%.2f", f"a unitless share shows {slider_format(share)!r}"
    app = open_app()
    shown = app.slider(key=widget_key("batch_window_ms")).proto.format
    assert shown == "%.0f ms", f"the sidebar's batch-window slider formats its value as {shown!r}"


def test_option_labels_are_each_options_format_value():
    for spec in NUMERIC_INPUTS:
        if spec.scale != "log":
            continue
        off_ladder = float(spec.default) * 1.0137  # a linked or typed value between steps
        for extra in ((float(spec.default),), (float(spec.default), off_ladder)):
            options = log_options(spec, extra)
            labels = option_labels(spec, options)
            for option in options:
                assert labels[option] == format_value(spec, option), f"{spec.name} {option}"


def _builder_page():
    """Four declared inputs through the builder: two views of canonical values, one box that
    keeps its own state, one choice."""
    from sdlab_model.page_params import CANARY_BY_NAME, TIMELINE_CHOICE_BY_NAME
    from sdlab_model.params import NUMERIC_BY_NAME
    from sdlab_ui.widgets import choice_widget, numeric_widget

    numeric_widget(NUMERIC_BY_NAME["rate_rps"], "w.rate", 300.0)
    numeric_widget(NUMERIC_BY_NAME["batch_window_ms"], "w.window", 7.0)
    numeric_widget(CANARY_BY_NAME["baseline_error_pct"], "w.own")
    choice_widget(TIMELINE_CHOICE_BY_NAME["scaler"], "w.scaler", "kpa")


def test_the_builder_draws_each_kind_from_its_declaration():
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_builder_page).run()
    assert app.select_slider(key="w.rate").value == 300.0, "a log input is a select slider"
    assert app.select_slider(key="w.rate").label == "Request rate (req/s)"
    window = app.slider(key="w.window")
    assert (window.value, window.min, window.max) == (7.0, 0.0, 100.0), "a linear input"
    own = app.number_input(key="w.own")
    assert (own.value, own.step, own.proto.format) == (0.1, 0.01, "%.3f"), "a typed box"
    assert app.selectbox(key="w.scaler").value == "kpa"


def test_a_canonical_value_wins_and_an_own_state_keeps():
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_builder_page).run()
    app.slider(key="w.window").set_value(20.0)
    app.number_input(key="w.own").set_value(0.5).run()
    assert app.slider(key="w.window").value == 7.0, "the canonical value is drawn again"
    assert app.number_input(key="w.own").value == 0.5, "the box kept what was typed"


def _re_set_widgets(app) -> set[str]:
    """The sidebar's widgets the last run sent with a value to show (a one-shot update)."""
    kinds = ("select_slider", "slider", "toggle", "selectbox", "radio")
    return {w.key for kind in kinds for w in app.sidebar.get(kind) if w.proto.set_value}


def test_a_rerun_re_sets_only_the_widgets_whose_value_the_canonical_state_changed():
    """The browser keeps a widget whose message is unchanged and draws again one the run sends
    a value to: a rerun that changes nothing, or a move the widget itself made, re-sets none."""
    from apptest_helpers import open_app, sidebar_value

    from sdlab_ui.lab.cards import card_key
    from sdlab_ui.sidebar import widget_key

    app = open_app()
    app.run()
    assert _re_set_widgets(app) == set(), f"an idle rerun re-set {sorted(_re_set_widgets(app))}"
    app.select_slider(key=widget_key("replicas")).set_value(3).run()
    assert sidebar_value(app, "replicas") == 3, "the replicas slider did not move"
    assert _re_set_widgets(app) == set(), f"a slider move re-set {sorted(_re_set_widgets(app))}"
    card = next(c for c in SCENARIOS if c.id == "batching")
    names = ("rate_rps", "model_latency_ms", "batch_window_ms", "replicas", "p99_target_ms")
    before = {name: sidebar_value(app, name) for name in names}
    app.button(key=card_key(card.id)).click().run()
    changed = {widget_key(n) for n in names if getattr(card, n) != before[n]}
    assert changed, "the card changes no sidebar value; pick one that does"
    assert _re_set_widgets(app) == changed, (
        f"the card re-set {sorted(_re_set_widgets(app))}, its changes are {sorted(changed)}"
    )
