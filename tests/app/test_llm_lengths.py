"""AppTest of the LLM page's measured lengths: a CSV uploaded through the widget becomes the
model's ``LengthSample`` (headline and simulator check), and a bad or hostile file gets a
message and the length inputs, never a traceback."""

from __future__ import annotations

import pytest
from apptest_helpers import assert_no_exception, forge_widget_state, open_app

from sdlab_model.llm import LlmWorkload, llm_latency, parse_length_csv, simulate_llm
from sdlab_model.llm.length_sample import MAX_SAMPLE_BYTES, MAX_SAMPLE_ROWS
from sdlab_ui.llm import cards, checks, lengths
from sdlab_ui.llm.controls import WIDGET
from sdlab_ui.text import ms_text

LLM_PAGE = "app_pages/llm.py"
GOOD = b"prompt_tokens,output_tokens\n800,200\n3000,400\n120,30\n1500,250\n"


def _upload(app, name: str, data: bytes):
    app.file_uploader(key=lengths.UPLOAD_KEY).set_value((name, data, "text/csv")).run()
    assert_no_exception(app)
    return app


def _ttft(app) -> str:
    return next(m.value for m in app.metric if m.label.startswith("TTFT p99"))


def _said(app) -> str:
    return " ".join(e.value.replace("\\", "") for e in app.error)


def test_an_uploaded_csv_becomes_the_models_lengths():
    app = _upload(open_app({}, page=LLM_PAGE), "lengths.csv", GOOD)
    workload = LlmWorkload(length_sample=parse_length_csv(GOOD))
    result = llm_latency(workload)
    assert _ttft(app) == ms_text(result.ttft_p99_ms), "the headline is not the sample's"
    assert _ttft(app) != ms_text(llm_latency(LlmWorkload()).ttft_p99_ms), "the sample did nothing"
    said = " ".join(s.value for s in app.success)
    assert "4 requests" in said and "1,355 tokens on average" in said, f"summary: {said}"
    assert any(c.value == lengths.ANALYTIC_NOTE for c in app.caption), "no word on the model"
    assert not [k for k in app.query_params if "length" in k], "the sample went into the link"
    app.file_uploader(key=lengths.UPLOAD_KEY).set_value(None).run()
    assert_no_exception(app)
    assert _ttft(app) == ms_text(llm_latency(LlmWorkload()).ttft_p99_ms), "removed, still used"


def test_the_simulator_check_draws_from_the_uploaded_sample():
    app = _upload(open_app({"llm.rate_rps": "6"}, page=LLM_PAGE), "lengths.csv", GOOD)
    app.button(key=checks.SIMULATE_KEY).click().run()
    assert_no_exception(app)
    workload = LlmWorkload(rate_rps=6.0, length_sample=parse_length_csv(GOOD))
    simulated = simulate_llm(workload, seed=checks.SIMULATION_SEED)
    shown = list(app.table[-1].value["Simulated"])
    assert shown == [ms_text(simulated.ttft.p99_ms), ms_text(simulated.tpot.p99_ms)], f"{shown}"


def test_a_sample_too_long_for_the_chosen_model_says_so():
    app = _upload(open_app({}, page=LLM_PAGE), "long.csv", b"3000,1500\n200,50\n")
    assert app.metric, "a sample within Llama 3.1 8B's context was refused"
    app.selectbox(key=WIDGET + "model_id").set_value("llama-2-13b").run()
    assert_no_exception(app)
    said = " ".join(i.value.replace("\\", "") for i in app.info)
    assert "longest request (4,500 tokens" in said and "context" in said, f"said: {said}"
    assert not app.metric, "a headline for a sample the model cannot hold"


def test_the_example_csv_is_a_sample_the_page_takes():
    app = open_app({}, page=LLM_PAGE)
    buttons = [b for b in app.get("download_button") if b.proto.id.endswith(lengths.EXAMPLE_KEY)]
    assert buttons, "no example CSV to download"
    example = lengths.example_csv().encode()
    assert parse_length_csv(example).rows == lengths.EXAMPLE_ROWS, "the example does not parse"
    _upload(app, "llm-lengths-example.csv", example)
    assert app.success, "the example was not taken"


def test_a_card_asks_its_question_only_without_a_sample():
    app = open_app({}, page=LLM_PAGE)
    card = cards.CARDS[0]
    app.button(key=cards.button_key(card)).click().run()
    assert any(card.question in m.value for m in app.markdown), "no question"
    _upload(app, "lengths.csv", GOOD)
    assert not any(card.question in m.value for m in app.markdown), "the card's answer is stale"


BAD_FILES = {
    "non-integer": (b"800,200\n12.5,3\n", "row 2: prompt_tokens '12.5' is not a whole number"),
    "negative": (b"800,-3\n", "output_tokens -3 is negative"),
    "zero output": (b"800,0\n", "output_tokens is 0"),
    "no rows": (b"prompt_tokens,output_tokens\n", "no rows"),
    "three cells": (b"1,2,3\n", "row 1 has 3 cells"),
    "binary": (bytes(range(256)) * 64, "not UTF-8 text"),
    "NUL bytes": (b"800,200\x00\n", "not text"),
    "huge": (b"8,2\n" * (MAX_SAMPLE_BYTES // 4 + 10), "over 1,000 kB"),
    "too many rows": (b"8,2\n" * (MAX_SAMPLE_ROWS + 1), f"at most {MAX_SAMPLE_ROWS:,}"),
    "markup": (b"<b>x</b>,<script>1</script>\n1,2\n3,<i>\n", "row 3: output_tokens"),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_file_says_why_and_the_length_inputs_apply(case):
    data, reason = BAD_FILES[case]
    app = _upload(open_app({}, page=LLM_PAGE), f"{case}.csv", data)
    assert reason in _said(app), f"{case}: {_said(app)}"
    assert "the length inputs above apply" in _said(app), f"{case}: not told what applies"
    assert _ttft(app) == ms_text(llm_latency(LlmWorkload()).ttft_p99_ms), f"{case}: not default"
    app.number_input(key=WIDGET + "replicas").set_value(2).run()  # the page goes on working
    assert_no_exception(app)
    assert _ttft(app) == ms_text(llm_latency(LlmWorkload(replicas=2)).ttft_p99_ms), case


def test_a_forged_file_id_or_a_forbidden_name_changes_nothing():
    from streamlit.proto.Common_pb2 import FileUploaderState
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    def forged(widget):
        uploaded = FileUploaderState()
        info = uploaded.uploaded_file_info.add()
        info.file_id, info.name, info.size = "no-such-file", "x.exe", 10
        state = WidgetState(id=widget.id)
        state.file_uploader_state_value.CopyFrom(uploaded)
        return state

    app = open_app({}, page=LLM_PAGE)
    forge_widget_state(app.file_uploader(key=lengths.UPLOAD_KEY), forged)
    app.run()
    assert_no_exception(app)
    assert _ttft(app) == ms_text(llm_latency(LlmWorkload()).ttft_p99_ms), "a forged upload counted"
    app = _upload(open_app({}, page=LLM_PAGE), "lengths.exe", GOOD)  # any name: content decides
    assert app.success, "a good CSV under another name was refused"
