"""Workload validation, and the tolerant query-parameter parser that must survive any URL."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import WORKLOADS

from sdlab_model.params import CHOICE_BY_NAME, NUMERIC_BY_NAME, NUMERIC_INPUTS, TOGGLE_BY_NAME
from sdlab_model.workload import Workload

_TRUE_WORDS = {"1", "true", "on", "yes", "y", "t"}
_FALSE_WORDS = {"0", "false", "off", "no", "n", "f"}


# Anything a person can type into a URL, and what a caller might pass by mistake.
JUNK_TEXT = st.sampled_from(
    [
        "1e400",
        "-1e400",
        "1e-400",
        "-5",
        "0",
        "-0",
        "nan",
        "NaN",
        "-nan",
        "inf",
        "-inf",
        "Infinity",
        "",
        "   ",
        "\t\n",
        "1_000",
        "0x10",
        "2.5",
        "3.0",
        " 42 ",
        "١٢",
        "½",
        "∞",
        "true",
        "off",
        "YES",
        "maybe",
        "<script>",
        "![x](http://e/)",
        "1" * 400,
        "9" * 5000,
    ]
)
NUMBER_LIKE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**6), 10**6).map(str),
    st.floats(-1e7, 1e7).map(lambda x: f"{x:.3f}"),
)
RAW_TEXT = st.one_of(JUNK_TEXT, NUMBER_LIKE, st.text(max_size=30))
NON_TEXT = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.just(10**5000), st.binary(max_size=8)
)
RAW_VALUE = st.one_of(
    RAW_TEXT,
    NON_TEXT,
    st.lists(st.one_of(RAW_TEXT, NON_TEXT), max_size=4),
    st.tuples(RAW_TEXT),
)
KEYS = st.one_of(
    st.sampled_from(list(NUMERIC_BY_NAME) + list(TOGGLE_BY_NAME)),
    st.text(max_size=20),
    st.sampled_from(["model", "page", "RATE_RPS", " rate_rps", "rate_rps[]"]),
    st.integers(),
)
QUERY_DICTS = st.dictionaries(KEYS, RAW_VALUE, max_size=12)


def _exact(workload: Workload) -> dict[str, str]:
    """Field to type name and repr: equal only if every value matches bit for bit and in type."""
    return {name: f"{type(value).__name__}:{value!r}" for name, value in workload.to_dict().items()}


def _as_given(name: str, raw) -> object:
    """The value a clean entry asks for, or None when the entry cannot be used as it stands."""
    if isinstance(raw, (list, tuple)):
        if len(raw) != 1:
            return None
        raw = raw[0]
    try:
        text = str(raw).strip()
    except ValueError:  # an int with more digits than CPython will print
        return None
    if name in TOGGLE_BY_NAME:
        word = text.lower()
        return True if word in _TRUE_WORDS else False if word in _FALSE_WORDS else None
    try:
        return float(text)
    except ValueError:
        return None


# --- Workload validation -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(NUMERIC_BY_NAME))
@pytest.mark.parametrize(
    "bad", ["below", "above", math.nan, math.inf, -math.inf, 10**400, -(10**400), True, "5", None]
)
def test_workload_refuses_bad_numbers_naming_the_field(name, bad):
    spec = NUMERIC_BY_NAME[name]
    value = {"below": spec.minimum - 1, "above": spec.maximum * 2}.get(bad, bad)
    with pytest.raises(ValueError) as caught:
        Workload(**{name: value})
    assert name in str(caught.value), f"message {caught.value} does not name the field {name}"


@pytest.mark.parametrize("name", [spec.name for spec in NUMERIC_INPUTS if spec.integer])
def test_whole_number_fields_refuse_fractions_and_store_ints(name):
    with pytest.raises(ValueError, match=f"{name}=2.5 must be a whole number"):
        Workload(**{name: 2.5})
    value = getattr(Workload(**{name: 2.0}), name)
    assert type(value) is int and value == 2, f"{name}=2.0 should be stored as int 2, got {value!r}"


@pytest.mark.parametrize("name", list(TOGGLE_BY_NAME))
@pytest.mark.parametrize("bad", [1, 0, "true", None, 1.0])
def test_toggles_take_only_booleans(name, bad):
    with pytest.raises(ValueError, match=name):
        Workload(**{name: bad})


@given(workload=WORKLOADS)
def test_a_valid_workload_rebuilds_from_its_dict(workload):
    rebuilt = Workload(**workload.to_dict())
    assert _exact(rebuilt) == _exact(workload), "to_dict must carry every value exactly"


# --- The tolerant parser -------------------------------------------------------------------------


@settings(max_examples=500)
@given(values=QUERY_DICTS)
@example(values={"replicas": 10**5000})
@example(values={"rate_rps": ["9" * 5000]})
@example(values={"rate_rps": [], "gpu": ["1", "0"], "replicas": "1e400", "models_hosted": "-inf"})
def test_from_strings_never_raises_and_gives_a_valid_workload(values):
    workload, notices = Workload.from_strings(values)
    assert isinstance(workload, Workload), f"from_strings returned {type(workload)}"
    assert Workload(**workload.to_dict()) == workload, "the result must pass Workload's validation"
    assert all(isinstance(n, str) and n for n in notices), f"notices must be text: {notices!r}"
    assert all(len(n) < 200 for n in notices), f"a notice is too long to read: {notices!r}"


@settings(max_examples=500)
@given(values=QUERY_DICTS)
@example(values={"rate_rps": "1e400", "replicas": "2.5", "gpu": "maybe", "x": "1"})
def test_from_strings_says_so_whenever_it_does_not_take_a_value_as_given(values):
    workload, notices = Workload.from_strings(values)
    known = NUMERIC_BY_NAME | TOGGLE_BY_NAME | CHOICE_BY_NAME
    unknown = [key for key in values if str(key) not in known]
    dirty = len(unknown)
    for key, raw in values.items():
        name = str(key)
        if name in CHOICE_BY_NAME:  # taken as given when it names a choice (any case)
            last = raw[-1] if isinstance(raw, (list, tuple)) and raw else raw
            single = not isinstance(raw, (list, tuple)) or len(raw) == 1
            word = last.strip().lower() if isinstance(last, str) else None
            if not (single and word in CHOICE_BY_NAME[name].choices):
                dirty += 1
            continue
        if name not in NUMERIC_BY_NAME and name not in TOGGLE_BY_NAME:
            continue
        label = (NUMERIC_BY_NAME.get(name) or TOGGLE_BY_NAME[name]).label
        wanted = _as_given(name, raw)
        if wanted is None or getattr(workload, name) != wanted:
            dirty += 1
        if wanted is not None and getattr(workload, name) != wanted:
            assert any(label in notice for notice in notices), (
                f"{name}={raw!r} became {getattr(workload, name)!r} without a notice: {notices!r}"
            )
    ignored = [n for n in notices if n.startswith("Ignored unknown setting")]
    # An unknown key with an empty list of values gets the "no value given" notice instead.
    with_values = [key for key in unknown if values[key] not in ([], ())]
    assert len(ignored) == len(with_values), f"unknown keys need notices: {unknown!r} {notices!r}"
    assert len(notices) >= dirty, f"{dirty} entries not taken as given, only notices {notices!r}"
    if dirty == 0:
        assert notices == (), f"clean input must give no notices, got {notices!r}"


@pytest.mark.parametrize(
    ("values", "field", "expected", "words"),
    [
        ({"rate_rps": "1e400"}, "rate_rps", 500_000.0, "outside"),
        ({"rate_rps": "-inf"}, "rate_rps", 1.0, "outside"),
        ({"rate_rps": "nan"}, "rate_rps", Workload().rate_rps, "NaN"),
        ({"rate_rps": ""}, "rate_rps", Workload().rate_rps, "not a number"),
        ({"replicas": "2.6"}, "replicas", 3, "whole number"),
        ({"replicas": ["4", "7"]}, "replicas", 7, "2 times"),
        ({"replicas": []}, "replicas", Workload().replicas, "no value"),
        ({"gpu": "maybe"}, "gpu", Workload().gpu, "on/off"),
    ],
)
def test_from_strings_repairs_each_bad_value_with_a_notice(values, field, expected, words):
    workload, notices = Workload.from_strings(values)
    assert getattr(workload, field) == expected, (
        f"{values} gave {field}={getattr(workload, field)!r}, expected {expected!r}"
    )
    assert any(words in notice for notice in notices), f"no notice with {words!r}: {notices!r}"


def test_from_strings_passes_ignored_keys_silently():
    workload, notices = Workload.from_strings({"model": "teaching", "page": "x"}, ignore=("model",))
    assert workload == Workload(), "ignored and unknown keys must not change the workload"
    assert notices == ("Ignored unknown setting 'page'.",), f"only 'page' is unknown: {notices!r}"


@settings(max_examples=300)
@given(workload=WORKLOADS)
def test_to_strings_round_trips_exactly(workload):
    strings = workload.to_strings()
    assert all(isinstance(v, str) for v in strings.values()), "to_strings must give only text"
    parsed, notices = Workload.from_strings(strings)
    assert notices == (), f"a workload's own strings must parse without notices: {notices!r}"
    assert _exact(parsed) == _exact(workload), f"round trip through {strings} changed the workload"


_CHANGES = [
    {"rate_rps": 350},  # an int for a float field
    {"replicas": 7.0},  # a float for an int field
    {"gpu": True, "dynamic_batching": False},
    {"lb_policy": "random", "arrival_cv": 2.5},
    {"rate_rps": 0.5},
    {"replicas": 2.5},
    {"gpu": 1},
    {"lb_policy": "fastest"},
    {"rate_rps": "fast", "lb_policy": "fastest"},  # two bad fields: the same one is named
    {"max_batch_size": 10**400},
]


@pytest.mark.parametrize("changes", _CHANGES, ids=repr)
def test_with_changes_checks_like_construction(changes):
    base = Workload(model_latency_ms=12.5, replicas=3)
    try:
        expected = Workload(**{**base.to_dict(), **changes})
    except ValueError as error:
        with pytest.raises(ValueError) as raised:
            base.with_changes(**changes)
        assert str(raised.value) == str(error), (
            f"with_changes({changes}) raised {raised.value!s}, construction {error!s}"
        )
        return
    changed = base.with_changes(**changes)
    assert changed == expected and hash(changed) == hash(expected), (
        f"with_changes({changes}) gave {changed}, construction {expected}"
    )
    types = {name: type(value) for name, value in changed.to_dict().items()}
    assert types == {name: type(value) for name, value in expected.to_dict().items()}, (
        f"with_changes({changes}) left a field in another type: {types}"
    )


def test_with_changes_rejects_an_unknown_field():
    with pytest.raises(TypeError, match="speed"):
        Workload().with_changes(speed=3)
