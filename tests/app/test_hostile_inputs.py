"""A hostile visitor's inputs: bad files, forged URLs and widget values never break a page.

Each case is one a hostile-visitor audit found breaking a page (issue 13); the page must show a
readable message, keep the lab as it was, and raise nothing.
"""

from __future__ import annotations

import json
import re

import pytest
from apptest_helpers import (
    assert_no_exception,
    forge_widget_state,
    headline_p99,
    open_app,
    sidebar_value,
)

from sdlab_model import scenario_file
from sdlab_model.workload import Workload
from sdlab_ui.sidebar import widget_key
from sdlab_ui.state import MAX_NOTICES_SHOWN, WORD_JOINER, plain_text

UPLOAD_KEY = "lab.scenario_upload"
LONE_SURROGATE = "\ud800"


def _file_with_lone_surrogate(where: str) -> bytes:
    document = json.loads(scenario_file.dumps(Workload(), "queueing"))
    if where == "model":
        document["model"] = LONE_SURROGATE
    elif where == "unknown key":
        document[LONE_SURROGATE] = 1
    elif where == "schema":
        document["schema"] = LONE_SURROGATE
    else:
        document["workload"]["gpu"] = LONE_SURROGATE
    return json.dumps(document).encode("ascii")  # the surrogate as its JSON escape, \ud800


@pytest.mark.parametrize("where", ["model", "unknown key", "schema", "boolean field"])
def test_a_file_with_a_lone_surrogate_is_refused_and_the_page_keeps_working(where):
    app = open_app({"rate_rps": "750"})
    app.file_uploader(key=UPLOAD_KEY).set_value(
        ("hostile.json", _file_with_lone_surrogate(where), "application/json")
    ).run()
    assert_no_exception(app)
    assert any("Not loaded" in e.value for e in app.error), f"no message for a bad file ({where})"
    assert sidebar_value(app, "rate_rps") == 750, "a refused file changed the lab"
    app.run()  # the next rerun (a slider move, a page switch) must work too
    assert_no_exception(app)
    assert headline_p99(app), "the Lab stopped rendering after a refused file"


def test_a_forged_model_value_is_ignored():
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    def forged(widget):
        state = WidgetState(id=widget.id)
        state.string_value = "quantum"
        return state

    app = open_app({"model": "teaching"})
    forge_widget_state(app.radio(key=widget_key("model")), forged)
    app.run()
    assert_no_exception(app)
    assert app.radio(key=widget_key("model")).value == "teaching", "a forged model was taken"
    app.run()
    assert_no_exception(app)
    assert headline_p99(app), "the Lab stopped rendering after a forged model"


def test_a_forged_upload_file_id_changes_nothing():
    from streamlit.proto.Common_pb2 import FileUploaderState
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    def forged(widget):
        uploaded = FileUploaderState()
        info = uploaded.uploaded_file_info.add()
        info.file_id, info.name, info.size = "no-such-file", "x.json", 10
        state = WidgetState(id=widget.id)
        state.file_uploader_state_value.CopyFrom(uploaded)
        return state

    app = open_app({"rate_rps": "750"})
    forge_widget_state(app.file_uploader(key=UPLOAD_KEY), forged)
    app.run()
    assert_no_exception(app)
    assert sidebar_value(app, "rate_rps") == 750, "a forged upload changed the lab"
    assert headline_p99(app), "the Lab stopped rendering after a forged upload"


# GitHub-flavoured Markdown's literal autolinks (mdast-util-gfm-autolink-literal), which the
# browser's Markdown renderer applies to text after backslash escapes are resolved: escaping the
# characters of a URL does not stop it from becoming a live link.
_GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)", re.IGNORECASE | re.ASCII)
_GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)
_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _autolinks(markdown: str) -> list[str]:
    """The literal autolinks GFM would make of ``markdown``'s text."""
    text = _MARKDOWN_ESCAPE.sub(r"\1", markdown)
    return [m.group(0) for m in (*_GFM_URL.finditer(text), *_GFM_EMAIL.finditer(text))]


HOSTILE_TEXTS = [
    "https://evil.example/login=1",
    "HTTP://EVIL.EXAMPLE",
    "www.evil.example/login",
    "WWW.evil.example",
    "mailto:victim@evil.example",
    "victim@evil.example",
    "see xmpp:bot@evil.example/x now",
]


def test_the_autolink_check_sees_links():
    for text in HOSTILE_TEXTS:
        assert _autolinks(text), f"the check misses the autolink in {text!r}"


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_plain_text_makes_no_autolink(text):
    shown = plain_text(f"Ignored unknown setting {text!r}.")
    assert not _autolinks(shown), f"{text!r} would be a live link: {_autolinks(shown)}"
    readable = shown.replace("\\", "").replace(WORD_JOINER, "")
    assert text in readable, f"the text must still read as given: {readable!r}"


def test_plain_text_shows_a_lone_surrogate_as_its_escape():
    shown = plain_text("key '\ud800'")
    assert shown.encode("utf-8"), "unreachable: encode raises if a surrogate is left"
    assert "ud800" in shown, f"the surrogate should be shown as an escape: {shown!r}"


@pytest.mark.parametrize("text", HOSTILE_TEXTS[:1] + HOSTILE_TEXTS[2:3] + HOSTILE_TEXTS[4:5])
def test_a_url_in_a_query_parameter_is_no_link_on_the_page(text):
    app = open_app({text: "1"})
    assert_no_exception(app)
    shown = [w.value for w in app.warning]
    assert shown, f"no notice for the unknown setting {text!r}"
    assert not any(_autolinks(value) for value in shown), f"a live link in a notice: {shown}"


def test_many_unknown_keys_give_a_few_notices_and_a_count():
    app = open_app({f"junk{index}": "1" for index in range(999)})
    assert_no_exception(app)
    assert len(app.warning) <= MAX_NOTICES_SHOWN + 1, f"{len(app.warning)} notices drawn"
    assert any(f"{999 - MAX_NOTICES_SHOWN} more" in w.value for w in app.warning), (
        f"no count of the notices not shown: {[w.value for w in app.warning][-1:]}"
    )
