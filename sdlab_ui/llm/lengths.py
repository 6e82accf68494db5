"""The LLM page's measured lengths: a CSV of (prompt tokens, output tokens), one row a request,
in place of the length inputs' lognormal (``sdlab_model.llm.LengthSample``), and an example file.

The file stays in this session, not in the link. A bad one is refused with the model's reason
(``parse_length_csv``) and the length inputs apply; the page never shows a traceback for one.
"""

from __future__ import annotations

import streamlit as st

from sdlab_model.llm import LengthSample, LlmWorkload, length_csv, parse_length_csv
from sdlab_model.llm.length_sample import MAX_SAMPLE_ROWS, lognormal_sample
from sdlab_ui import downloads
from sdlab_ui.server import budget
from sdlab_ui.state import plain_text

UPLOAD_KEY = "llm.lengths_upload"
EXAMPLE_KEY = "llm.lengths_example"
LABEL = "Measured lengths: a CSV of prompt and output tokens"
EXAMPLE_ROWS = 500
HOW = (
    f"One row per request: prompt tokens, output tokens (whole numbers, at least 1; a header "
    f"such as `prompt_tokens,output_tokens` is optional). At most 1 MB and {MAX_SAMPLE_ROWS:,} "
    "rows, each within the model's context. It stays in this session: the link does not carry "
    "it. The example is 500 requests drawn from the default lognormals."
)
ANALYTIC_NOTE = (
    "The simulator draws whole rows. The analytic model takes each column's own distribution "
    "(its mean over 32 slices of probability, finer in the top 4%: more than its moments) but "
    "treats prompt and output lengths as independent, so where long prompts bring long "
    "answers, check it with the simulator below."
)


@st.cache_resource(max_entries=8, show_spinner=False)
def _parsed(data: bytes) -> tuple[LengthSample | None, str]:
    """The sample in a file's bytes, or None and why not (a 1 MB file: tens of ms)."""
    with budget.slot(budget.WORK):
        try:
            return parse_length_csv(data), ""
        except ValueError as error:
            return None, str(error)


def example_csv() -> str:
    """The example file: requests drawn from the page's default lognormals, seeded."""
    w = LlmWorkload()
    sample = lognormal_sample(
        (w.prompt_tokens_mean, w.prompt_tokens_cv),
        (w.output_tokens_mean, w.output_tokens_cv),
        EXAMPLE_ROWS,
        seed=0,
    )
    return length_csv(sample)


def in_use() -> bool:
    """Whether the uploader holds a file (then the inputs above are not the page's lengths)."""
    return st.session_state.get(UPLOAD_KEY) is not None


def draw() -> LengthSample | None:
    """The uploader in an expander (open while it holds a file); the sample it holds, if good."""
    with st.expander(LABEL, expanded=in_use()):
        uploaded = st.file_uploader(
            "CSV of prompt tokens, output tokens",
            key=UPLOAD_KEY,  # any file name (a type list makes Streamlit raise on a forged one)
            max_upload_size=1,
            help=HOW,
        )
        downloads.button(
            "Download an example CSV",
            example_csv,  # made when clicked
            file_name="llm-lengths-example.csv",
            mime="text/csv",
            key=EXAMPLE_KEY,
        )
        st.caption(HOW)
        if uploaded is None:
            return None
        name = plain_text(str(getattr(uploaded, "name", "the file"))[:60])
        if not hasattr(uploaded, "getvalue"):  # a file id the server never received (forged)
            sample, problem = None, "the file did not arrive"
        else:
            sample, problem = _parsed(uploaded.getvalue())
        if sample is None:
            st.error(
                f"Not used, the length inputs above apply: {name}: {plain_text(problem)}.",
                icon=":material/error:",
            )
            return None
        st.success(_summary(name, sample), icon=":material/table:")
        st.caption(ANALYTIC_NOTE)
        return sample


def _summary(name: str, sample: LengthSample) -> str:
    return (
        f"Lengths from {name}: {sample.rows:,} requests; prompts {sample.mean('prompt'):,.0f} "
        f"tokens on average (cv {sample.cv('prompt'):.2f}), outputs "
        f"{sample.mean('output'):,.0f} (cv {sample.cv('output'):.2f}). The four length inputs "
        "above are set aside while it is loaded."
    )
