"""The real app under junk: fuzzed query parameters, slider corners and bad scenario files.

Each case runs ``app.py`` through AppTest with the parameters a person could put in a URL. The
app must render without an exception, show a notice for junk, settle on exactly the lab the model's
tolerant parser makes of the same parameters, and write a clean URL back. The sample is small
(AppTest runs the whole page each time); the model-level tests fuzz the parser and sweep every
corner exhaustively.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sdlab_model import scenario_file
from sdlab_model.params import DEFAULT_MODEL, MODEL_CHOICES, NUMERIC_INPUTS, TOGGLE_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui.state import MAX_NOTICES_SHOWN

APP = Path(__file__).resolve().parents[2] / "app.py"
TIMEOUT_S = 120
UPLOAD_KEY = "lab.scenario_upload"
_NAN_WORD = re.compile(r"\bnan\b", re.IGNORECASE)
# A Markdown link/image or an HTML tag whose opening character is not backslash-escaped.
_LIVE_MARKUP = re.compile(r"(?<!\\)\]\(|(?<!\\)<[a-zA-Z]")

_JUNK = [
    "1e400",
    "-1e400",
    "-5",
    "nan",
    "inf",
    "-inf",
    "",
    "   ",
    "0x10",
    "½",
    "<b>x</b>",
    "![x](http://evil.example/a.png)",
    "9" * 5000,
    "１２",
    "2.5",
    "maybe",
]
_KEYS = [spec.name for spec in NUMERIC_INPUTS] + list(TOGGLE_BY_NAME) + ["model", "colour"]


def _seeded_junk(seed: int) -> dict[str, str | list[str]]:
    """A few random junk parameters; seeded so a failure names the same URL every run."""
    rng = random.Random(seed)
    params: dict[str, str | list[str]] = {}
    for key in rng.sample(_KEYS, k=4):
        params[key] = rng.choice(_JUNK) if rng.random() < 0.7 else rng.sample(_JUNK, k=2)
    return params


FUZZED_PARAMS = [
    {"rate_rps": "1e400", "gpu": "maybe"},
    {"replicas": "-5", "model_latency_ms": "nan"},
    {"rate_rps": ["1", "2", "3"], "models_hosted": ""},  # AppTest drops an empty list
    {"model": "magic", "p99_target_ms": "inf"},
    {"<script>alert(1)</script>": "x", "batch_window_ms": "-inf"},
    {"p99_target_ms": "", "batch_window_ms": "   "},
    {"rate_rps": "![x](http://evil.example/a.png)", "replicas": "<img src=x onerror=alert(1)>"},
    {"models_hosted": "9" * 5000, "max_batch_size": "0x10"},
    {"gpu_speedup": "1e-400", "cpu_batch_overhead_share": "2", "gpu_batch_overhead_share": "-1"},
    *[_seeded_junk(seed) for seed in range(3)],
]


def _as_query(params: dict) -> dict[str, list[str]]:
    return {k: v if isinstance(v, list) else [v] for k, v in params.items()}


def _expected(params: dict) -> tuple[Workload, str, tuple[str, ...]]:
    """What the model's tolerant parser makes of ``params``: the lab the app must show."""
    workload, notices = Workload.from_strings(_as_query(params), ignore=("model",))
    given = _as_query(params).get("model") or []
    model = str(given[-1]).strip().lower() if given else "queueing"
    if model not in MODEL_CHOICES:
        return workload, "queueing", (*notices, "model")
    return workload, model, notices


def _run(params: dict) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def _lab_in_url(at: AppTest) -> tuple[Workload, str]:
    """The lab the app wrote back into the URL, which must parse without a single notice.

    The URL holds only what differs from the defaults: no model means the default one.
    """
    url = {k: v if isinstance(v, list) else [v] for k, v in at.query_params.items()}
    workload, notices = Workload.from_strings(url, ignore=("model",))
    assert notices == (), f"the app wrote a URL its own parser complains about: {notices}"
    return workload, url.get("model", [DEFAULT_MODEL])[-1]


def _shown_text(at: AppTest) -> list[str]:
    # Warnings and errors are left out: they quote what the visitor typed, NaN included.
    elements = [*at.markdown, *at.caption, *at.info, *at.success]
    texts = [str(e.value) for e in elements]
    texts += [f"{m.label} {m.value} {m.delta}" for m in at.metric]
    return texts


def _assert_renders_cleanly(at: AppTest, what: str) -> None:
    assert not at.exception, f"{what}: the app raised {[e.value for e in at.exception]}"
    nan_texts = [t for t in _shown_text(at) if _NAN_WORD.search(t)]
    assert not nan_texts, f"{what}: the page shows NaN: {nan_texts[:3]}"


@pytest.mark.parametrize("params", FUZZED_PARAMS, ids=lambda p: "&".join(map(str, p))[:40])
def test_fuzzed_query_params_render_with_a_notice(params):
    at = _run(params)
    _assert_renders_cleanly(at, f"params {params}")
    workload, model, notices = _expected(params)
    assert notices, f"test setup: {params} should be junk to the parser"
    warnings = [w.value for w in at.warning]
    # Past MAX_NOTICES_SHOWN the rest are counted in one more warning.
    shown = min(len(notices), MAX_NOTICES_SHOWN) + (len(notices) > MAX_NOTICES_SHOWN)
    assert len(warnings) >= shown, f"{params}: {shown} notices expected, the page shows {warnings}"
    assert not any(_LIVE_MARKUP.search(w) for w in warnings), (
        f"a notice shows URL text as live Markdown or HTML: {warnings}"
    )
    assert _lab_in_url(at) == (workload, model), (
        f"{params}: the app shows {_lab_in_url(at)}, the parser makes {(workload, model)}"
    )


def test_a_clean_deep_link_shows_no_notice():
    target = Workload(rate_rps=4000.0, replicas=12, gpu=True)
    at = _run({**target.to_strings(), "model": "teaching"})
    _assert_renders_cleanly(at, "clean deep link")
    assert not at.warning, f"a clean link must not warn: {[w.value for w in at.warning]}"
    assert _lab_in_url(at) == (target, "teaching"), "a clean deep link must open its exact lab"


def _corner(index: int, toggles: tuple[bool, bool]) -> Workload:
    """Main inputs at min or max by the bits of ``index``; advanced ones at defaults."""
    main = [spec for spec in NUMERIC_INPUTS if not spec.advanced]
    values = {
        spec.name: spec.maximum if index >> bit & 1 else spec.minimum
        for bit, spec in enumerate(main)
    }
    return Workload(**values, **dict(zip(TOGGLE_BY_NAME, toggles, strict=True)))


CORNERS = [
    (_corner(0, (False, False)), "queueing"),  # everything at its minimum
    (_corner(63, (True, True)), "queueing"),  # everything at its maximum
    (_corner(0b000001, (True, False)), "teaching"),  # 500k req/s on one replica: unstable
    (_corner(0b001000, (False, True)), "queueing"),  # 500 replicas idling
    (_corner(0b010010, (True, True)), "teaching"),  # slow model, 500 models hosted
    (_corner(0b101101, (False, False)), "queueing"),  # huge rate, slow model, loose target
]


@pytest.mark.parametrize(("workload", "model"), CORNERS, ids=lambda c: str(c)[:60])
def test_slider_corners_render_on_the_lab_page(workload, model):
    at = _run({**workload.to_strings(), "model": model})
    _assert_renders_cleanly(at, f"corner {workload.to_strings()} {model}")
    assert _lab_in_url(at) == (workload, model), "a corner must open exactly, not be clamped"


@pytest.mark.parametrize(("workload", "model"), CORNERS[1:3], ids=lambda c: str(c)[:60])
def test_slider_corners_render_on_the_heatmaps_page(workload, model):
    at = _run({**workload.to_strings(), "model": model})
    at.switch_page("app_pages/heatmaps.py").run()
    _assert_renders_cleanly(at, f"heatmaps at corner {workload.to_strings()} {model}")


def test_rate_slider_moved_to_its_ends_renders():
    at = _run({})
    rate = next(s for s in at.select_slider if s.label.startswith("Request rate"))
    spec = NUMERIC_INPUTS[0]
    assert spec.name == "rate_rps", "test setup: the first input is the request rate"
    for end in (spec.maximum, spec.minimum):
        rate.set_value(end)
        at.run()
        _assert_renders_cleanly(at, f"rate slider at {end}")
        rate = next(s for s in at.select_slider if s.label.startswith("Request rate"))


def _upload(at: AppTest, content: bytes) -> AppTest:
    at.file_uploader(key=UPLOAD_KEY).set_value(("lab.json", content, "application/json"))
    return at.run()


BAD_UPLOADS = {
    "malformed JSON": (b'{"schema": ', "not valid JSON"),
    "NaN": (scenario_file.dumps(Workload(), "queueing").replace("200.0", "NaN").encode(), "NaN"),
    "unknown key": (
        scenario_file.dumps(Workload(), "queueing").replace('"model"', '"x": 1, "model"').encode(),
        "Unknown key",
    ),
    "oversized": (b" " * (scenario_file.MAX_FILE_BYTES + 1), "too large"),
    "out of range": (
        scenario_file.dumps(Workload(), "queueing")
        .replace('"replicas": 2', '"replicas": 900')
        .encode(),
        "replicas=900",
    ),
}


@pytest.mark.parametrize("case", list(BAD_UPLOADS))
def test_a_bad_scenario_file_leaves_the_lab_unchanged_and_says_why(case):
    content, words = BAD_UPLOADS[case]
    start = Workload(rate_rps=3000.0, replicas=7)
    at = _run({**start.to_strings(), "model": "teaching"})
    at = _upload(at, content)
    _assert_renders_cleanly(at, f"upload of {case}")
    errors = [e.value for e in at.error]
    assert any(words in e for e in errors), f"{case}: no error naming {words!r}, shown {errors}"
    assert _lab_in_url(at) == (start, "teaching"), f"{case}: a bad file changed the lab"


def test_a_good_scenario_file_restores_its_lab():
    saved = Workload(rate_rps=12_345.0, replicas=9, gpu=True, gpu_speedup=12.5)
    at = _upload(_run({}), scenario_file.dumps(saved, "teaching").encode())
    _assert_renders_cleanly(at, "upload of a good file")
    assert not at.error, f"a good file must load: {[e.value for e in at.error]}"
    assert _lab_in_url(at) == (saved, "teaching"), "the file's lab must be restored exactly"
