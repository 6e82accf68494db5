"""Scenario files: exact round trip, and every bad-file class refused with a message naming it."""

from __future__ import annotations

import contextlib
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import WORKLOADS

from sdlab_model.params import MODEL_CHOICES, TOGGLE_INPUTS
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.scenario_file import (
    MAX_FILE_BYTES,
    SCHEMA,
    VERSION,
    ScenarioFile,
    ScenarioFileError,
    dumps,
    loads,
)
from sdlab_model.workload import Workload

MODELS = st.sampled_from(MODEL_CHOICES)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=10,
)


def _document(workload: Workload | None = None, model: str = "queueing") -> dict:
    return json.loads(dumps(workload or Workload(), model))


def _text(document: dict) -> str:
    return json.dumps(document)


def _exact(workload: Workload) -> dict[str, str]:
    """Field to type name and repr: equal only if every value matches bit for bit and in type."""
    return {name: f"{type(value).__name__}:{value!r}" for name, value in workload.to_dict().items()}


@settings(max_examples=300)
@given(workload=WORKLOADS, model=MODELS)
def test_round_trip_is_exact(workload, model):
    text = dumps(workload, model)
    for data in (text, text.encode("utf-8")):
        loaded = loads(data)
        assert loaded == ScenarioFile(workload=workload, model=model), (
            f"round trip changed the lab: {loaded} != {workload}, {model}"
        )
        assert _exact(loaded.workload) == _exact(workload), (
            "round trip kept the values equal but not bit-exact or not the same types"
        )


def test_dumps_writes_a_small_versioned_document_with_every_field():
    text = dumps(Workload(), "teaching")
    document = json.loads(text)
    assert len(text.encode("utf-8")) < 1_536, f"a scenario file should be small, got {len(text)} B"
    assert (document["schema"], document["version"], document["model"]) == (
        SCHEMA,
        VERSION,
        "teaching",
    ), f"header is wrong: {document}"
    assert document["workload"] == Workload().to_dict(), "workload section must list every field"
    assert list(document) == ["schema", "version", "model", "workload", "residency"], (
        "key order is the spec's"
    )


def test_dumps_refuses_an_unknown_model():
    with pytest.raises(ValueError, match="model"):
        dumps(Workload(), "magic")


def _replace_workload_value(name: str, value) -> str:
    document = _document()
    document["workload"][name] = value
    return _text(document)


def _without_workload_key(name: str) -> str:
    document = _document()
    del document["workload"][name]
    return _text(document)


def _with_top_level(key: str, value) -> str:
    return _text({**_document(), key: value})


_DEFAULT_TEXT = dumps(Workload(), "queueing")

# (bad file, words its message must contain): one row per bad-file class.
BAD_FILES = {
    "not UTF-8": (b'{"schema": "\xff\xfe"}', "not UTF-8"),
    "lone surrogate": ('{"schema": "\ud800"}', "not UTF-8"),
    "malformed JSON": ('{"schema": "sdlab.scenario", ', "not valid JSON"),
    "empty file": (b"", "not valid JSON"),
    "trailing garbage": (_DEFAULT_TEXT + "}", "not valid JSON"),
    "deep nesting": ("[" * 50_000 + "]" * 10, "nested too deeply"),
    "list, not object": ("[1, 2, 3]", "JSON object"),
    "string, not object": ('"sdlab.scenario"', "JSON object"),
    "null": ("null", "JSON object"),
    "wrong schema": (_DEFAULT_TEXT.replace(SCHEMA, "other.app"), "not an sdlab scenario file"),
    "schema not a string": (_DEFAULT_TEXT.replace(f'"{SCHEMA}"', "7"), "not an sdlab scenario"),
    "newer version": (_DEFAULT_TEXT.replace('"version": 2', '"version": 3'), "version 3"),
    "version as string": (_DEFAULT_TEXT.replace('"version": 2', '"version": "2"'), "version"),
    "version as bool": (_DEFAULT_TEXT.replace('"version": 2', '"version": true'), "version"),
    "unknown top-level key": (
        _DEFAULT_TEXT.replace('"model"', '"colour": "red", "model"'),
        "Unknown key `colour` at the top level",
    ),
    "unknown workload key": (
        _DEFAULT_TEXT.replace('"rate_rps"', '"rate_qps": 5, "rate_rps"'),
        "Unknown key `rate_qps` in workload",
    ),
    "missing top-level key": (
        _text({k: v for k, v in _document().items() if k != "model"}),
        "Missing key model",
    ),
    "missing workload key": (_without_workload_key("gpu"), "Missing key gpu in workload"),
    "workload not an object": (_with_top_level("workload", []), "workload must be a JSON object"),
    "string where number": (
        _replace_workload_value("rate_rps", "200"),
        "rate_rps must be a number",
    ),
    "bool where number": (_replace_workload_value("replicas", True), "replicas must be a number"),
    "null where number": (_replace_workload_value("rate_rps", None), "rate_rps must be a number"),
    "number where bool": (_replace_workload_value("gpu", 1), "gpu must be true or false"),
    "string where bool": (_replace_workload_value("gpu", "true"), "gpu must be true or false"),
    "above range": (_replace_workload_value("rate_rps", 1e9), "rate_rps=1000000000.0 is outside"),
    "below range": (_replace_workload_value("replicas", 0), "replicas=0 is outside"),
    "huge integer": (_replace_workload_value("replicas", 10**400), "replicas="),
    "too many digits": (
        _DEFAULT_TEXT.replace('"replicas": 2', '"replicas": ' + "9" * 5_000),
        "too many digits",
    ),
    "not whole": (_replace_workload_value("replicas", 2.5), "replicas=2.5 must be a whole number"),
    "NaN": (_DEFAULT_TEXT.replace('"rate_rps": 200.0', '"rate_rps": NaN'), "NaN"),
    "Infinity": (_DEFAULT_TEXT.replace('"rate_rps": 200.0', '"rate_rps": Infinity'), "Infinity"),
    "-Infinity": (
        _DEFAULT_TEXT.replace('"gpu_speedup": 8.0', '"gpu_speedup": -Infinity'),
        "-Infinity",
    ),
    "overflowing number": (
        _DEFAULT_TEXT.replace('"rate_rps": 200.0', '"rate_rps": 1e400'),
        "`1e400`, too large to be finite",
    ),
    "duplicate key": (
        _DEFAULT_TEXT.replace('"model"', '"model": "teaching", "model"'),
        "`model` appears twice",
    ),
    "oversized bytes": (_DEFAULT_TEXT.encode() + b" " * MAX_FILE_BYTES, "too large"),
    "oversized text": (_DEFAULT_TEXT + " " * MAX_FILE_BYTES, "too large"),
    "oversized in UTF-8 only": (
        _DEFAULT_TEXT + " " * (MAX_FILE_BYTES - len(_DEFAULT_TEXT) - 1) + "é",
        "too large",
    ),
    "unknown model": (_DEFAULT_TEXT.replace('"queueing"', '"magic"'), "Unknown model `magic`"),
    "model not a string": (_DEFAULT_TEXT.replace('"queueing"', "3"), "model must be a string"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_each_bad_file_class_is_refused_with_a_message_naming_it(case):
    data, words = BAD_FILES[case]
    with pytest.raises(ScenarioFileError) as caught:
        loads(data)
    message = str(caught.value)
    assert isinstance(caught.value, ValueError), "ScenarioFileError must be a ValueError"
    assert words in message, f"{case}: message {message!r} does not contain {words!r}"
    assert len(message) < 300, f"{case}: message is too long to read: {len(message)} chars"


def test_size_is_checked_before_parsing():
    # Malformed and too deep for json, yet the size must be what is reported: no parse happened.
    for data in ("[" * (MAX_FILE_BYTES + 1), b"\xff" * (MAX_FILE_BYTES + 1)):
        with pytest.raises(ScenarioFileError, match="too large"):
            loads(data)


def test_a_file_of_exactly_the_limit_loads():
    padded = _DEFAULT_TEXT + " " * (MAX_FILE_BYTES - len(_DEFAULT_TEXT.encode()))
    assert len(padded.encode()) == MAX_FILE_BYTES, "test setup: file should be exactly the limit"
    assert loads(padded).workload == Workload(), "a file of exactly 64 KB must load"


def test_a_byte_order_mark_is_accepted():
    assert loads(b"\xef\xbb\xbf" + _DEFAULT_TEXT.encode()).workload == Workload(), (
        "a UTF-8 file with a BOM (Windows editors) must load"
    )


def test_whole_floats_are_accepted_for_whole_number_fields():
    loaded = loads(_replace_workload_value("replicas", 7.0))
    assert loaded.workload.replicas == 7 and type(loaded.workload.replicas) is int, (
        f"replicas 7.0 should load as int 7, got {loaded.workload.replicas!r}"
    )


def test_untrusted_text_in_messages_is_an_inert_code_span():
    hostile = "![x](http://evil.example/p.png)`<b>`" + "z" * 200
    document = _document()
    document[hostile] = 1
    with pytest.raises(ScenarioFileError) as caught:
        loads(_text(document))
    message = str(caught.value)
    assert "`![x](http://evil.example/p.png)'<b>'" in message, (
        f"hostile key must be quoted in backticks with its own backticks removed: {message!r}"
    )
    assert message.count("`") == 2, f"exactly one code span expected: {message!r}"
    assert "z" * 50 not in message, "untrusted text must be shortened"


MARKDOWN_PAYLOAD = "[x](https://evil.example/i.png) $x^2$ :red[boo] <b>b</b> **s**"


def _outside_code_spans(message: str) -> str:
    return re.sub(r"`[^`]*`", "", message)


@pytest.mark.parametrize(
    "where", ["workload.lb_policy", "model", "residency.accelerator", "key", "schema"]
)
def test_visitor_text_in_any_string_slot_reaches_the_message_only_inside_a_code_span(where):
    document = _document()
    if where == "key":
        document["workload"][MARKDOWN_PAYLOAD] = 1
    elif "." in where:
        section, name = where.split(".")
        document[section][name] = MARKDOWN_PAYLOAD
    else:
        document[where] = MARKDOWN_PAYLOAD
    with pytest.raises(ScenarioFileError) as caught:
        loads(_text(document))
    rendered = _outside_code_spans(str(caught.value))
    for active in ("evil.example", "$x", "red[", "<b>", "**s"):
        assert active not in rendered, (
            f"{where}: {active!r} reaches the message outside a code span: {caught.value}"
        )


def test_loads_refuses_a_non_text_argument():
    with pytest.raises(TypeError):
        loads(123)  # type: ignore[arg-type]


@settings(max_examples=200)
@given(data=st.binary(max_size=300) | st.text(max_size=300))
def test_arbitrary_input_raises_only_scenario_file_error(data):
    with contextlib.suppress(ScenarioFileError):
        loads(data)


@settings(max_examples=200)
@given(document=JSON_VALUES)
def test_arbitrary_json_raises_only_scenario_file_error(document):
    with contextlib.suppress(ScenarioFileError):
        loads(json.dumps(document))


@settings(max_examples=300)
@given(
    name=st.sampled_from(list(Workload().to_dict())),
    value=JSON_VALUES,
)
def test_one_changed_value_loads_as_given_or_is_refused_naming_the_field(name, value):
    text = _replace_workload_value(name, value)
    try:
        loaded = loads(text)
    except ScenarioFileError as error:
        assert name in str(error), f"message {error} does not name the field {name}"
        return
    assert getattr(loaded.workload, name) == value, (
        f"{name}={value!r} loaded as {getattr(loaded.workload, name)!r}: a file must not be changed"
    )
    assert not isinstance(value, bool) or name in {t.name for t in TOGGLE_INPUTS}, (
        f"JSON {value} was accepted as a number for {name}"
    )


@given(workload=WORKLOADS, model=MODELS, drop=st.sampled_from(list(Workload().to_dict())))
@settings(max_examples=50)
def test_partial_workloads_are_refused_not_filled(workload, model, drop):
    document = json.loads(dumps(workload, model))
    del document["workload"][drop]
    with pytest.raises(ScenarioFileError, match=f"Missing key {drop} in workload"):
        loads(_text(document))


LONE_SURROGATE = "\ud800"  # JSON's "\ud800" escape: Python reads it, UTF-8 cannot encode it


def _with_lone_surrogate(where: str) -> str:
    document = _document()
    if where == "model":
        document["model"] = LONE_SURROGATE
    elif where == "unknown key":
        document[LONE_SURROGATE] = 1
    elif where == "schema":
        document["schema"] = LONE_SURROGATE
    elif where == "boolean field":
        document["workload"]["gpu"] = "x" + LONE_SURROGATE
    elif where == "workload key":
        document["workload"][LONE_SURROGATE] = 1
    return json.dumps(document)  # ensure_ascii: the surrogate is written as the escape


@pytest.mark.parametrize(
    "where", ["model", "unknown key", "schema", "boolean field", "workload key"]
)
def test_a_lone_surrogate_is_refused_with_a_message_a_page_can_show(where):
    text = _with_lone_surrogate(where)
    assert "\\ud800" in text, "the test file must hold the escape itself"
    with pytest.raises(ScenarioFileError) as caught:
        loads(text.encode("ascii"))
    message = str(caught.value)
    assert message.encode("utf-8"), "unreachable: encode raises if the message cannot be shown"
    assert "surrogate" in message, f"the message should say what is wrong: {message!r}"


def test_an_escaped_surrogate_pair_is_ordinary_text():
    document = _document()
    document["model"] = "\U0001f600"  # written as the pair "\ud83d\ude00"
    text = json.dumps(document)
    assert "\\ud83d\\ude00" in text, "the test file must hold the escaped pair"
    with pytest.raises(ScenarioFileError, match="Unknown model") as caught:
        loads(text)
    assert caught.value.args[0].encode("utf-8"), "a pair is one character, shown as itself"


# Lone surrogates (category Cs) are left out of st.text unless asked for.
ANY_TEXT = st.text(st.characters(codec=None, categories=["Cs", "Ll", "Nd", "Po", "Zs"]), max_size=6)


@settings(max_examples=300)
@given(
    slot=st.sampled_from(["model", "schema", "top key", "workload key", *Workload().to_dict()]),
    value=ANY_TEXT
    | st.lists(ANY_TEXT, max_size=2)
    | st.dictionaries(ANY_TEXT, ANY_TEXT, max_size=2),
)
def test_every_message_can_be_encoded_as_utf8(slot, value):
    document = _document()
    if slot in ("model", "schema"):
        document[slot] = value
    elif slot == "top key":
        document[str(value)] = 1
    elif slot == "workload key":
        document["workload"][str(value)] = 1
    else:
        document["workload"][slot] = value
    try:
        loads(json.dumps(document))  # json.dumps writes a lone surrogate as its escape
    except ScenarioFileError as error:
        str(error).encode("utf-8")  # raises UnicodeEncodeError if a surrogate reached it


# Residency inputs (version 2): saved beside the workload, read back exactly, checked strictly.

_RESIDENCY = ResidencyInputs(
    model_size_gb=3.5,
    activation_reserve_gb=6.0,
    load_gb_per_s=12.5,
    load_overhead_ms=40.0,
    accelerator="gcp-a2-ultragpu-1g",
    model_sizes_gb=(13.0, 7.25, 1.0),
)


def test_residency_inputs_round_trip_exactly():
    loaded = loads(dumps(Workload(), "queueing", _RESIDENCY))
    assert loaded.residency == _RESIDENCY, f"residency came back as {loaded.residency}"
    assert loaded.workload == Workload(), "the workload changed beside the residency inputs"


def test_a_version_1_file_loads_with_the_default_residency_inputs():
    document = json.loads(dumps(Workload(), "queueing", _RESIDENCY))
    document["version"] = 1
    del document["residency"]
    loaded = loads(json.dumps(document))
    assert loaded.residency == ResidencyInputs(), "a version 1 file must get the defaults"
    document["residency"] = {}
    with pytest.raises(ScenarioFileError, match="Unknown key"):
        loads(json.dumps(document))


def _with_residency(**changes) -> str:
    document = json.loads(dumps(Workload(), "queueing", _RESIDENCY))
    document["residency"].update(changes)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"model_size_gb": "2"}, "residency.model_size_gb must be a number"),
        ({"load_gb_per_s": True}, "residency.load_gb_per_s must be a number"),
        ({"load_gb_per_s": 0}, "load_gb_per_s"),
        ({"activation_reserve_gb": 10**30}, "outside the allowed range"),
        ({"accelerator": "h100-`x`"}, "not one of"),
        ({"accelerator": 3}, "accelerator must be a string"),
        ({"model_sizes_gb": "1,2"}, "must be a list of numbers"),
        ({"model_sizes_gb": [1, "2"]}, "must hold numbers only"),
        ({"model_sizes_gb": [1, -2]}, "outside the allowed range"),
        ({"model_sizes_gb": [1.0] * 10_000}, "at most"),
    ],
)
def test_bad_residency_values_are_refused_with_a_message(changes, expected):
    with pytest.raises(ScenarioFileError, match=re.escape(expected)) as caught:
        loads(_with_residency(**changes))
    assert "`x`" not in str(caught.value), "untrusted text must not keep its backticks"


def test_a_missing_or_unknown_residency_key_is_refused():
    document = json.loads(dumps(Workload(), "queueing", _RESIDENCY))
    del document["residency"]["load_overhead_ms"]
    with pytest.raises(ScenarioFileError, match="Missing key load_overhead_ms in residency"):
        loads(json.dumps(document))
    with pytest.raises(ScenarioFileError, match="Unknown key"):
        loads(_with_residency(vram_gb=80))
    document = json.loads(dumps(Workload(), "queueing"))
    del document["residency"]
    with pytest.raises(ScenarioFileError, match="Missing key residency"):
        loads(json.dumps(document))
