"""The load test's protocol visitor keeps large messages as a browser does.

A browser lists the hashes of the large messages it keeps with every rerun request, and the
server sends a reference in place of any of them it would send again. A protocol visitor that
kept nothing would be sent every chart and diagram in full, and so would load the server more
than the browsers it stands for.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "load_test.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("load_test_for_cache", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


load_test = _load_script()


def _element(text: str, *, cacheable: bool, fragment: str = "") -> tuple[ForwardMsg, bytes]:
    message = ForwardMsg()
    message.hash = f"hash-of-{text}"
    message.metadata.cacheable = cacheable
    message.delta.new_element.markdown.body = text
    message.delta.fragment_id = fragment
    return message, message.SerializeToString()


def _reference_to(message: ForwardMsg) -> tuple[ForwardMsg, bytes]:
    reference = ForwardMsg()
    reference.ref_hash = message.hash
    return reference, reference.SerializeToString()


def test_a_kept_message_is_listed_and_a_reference_to_it_reads_as_the_message():
    cache = load_test.MessageCache()
    diagram, raw = _element("the diagram", cacheable=True)
    small, small_raw = _element("a caption", cacheable=False)

    assert cache.resolve(diagram, raw) is diagram
    assert cache.resolve(small, small_raw) is small
    assert cache.hashes() == [diagram.hash]

    resolved = cache.resolve(*_reference_to(diagram))
    assert resolved.delta.new_element.markdown.body == "the diagram"


def test_a_message_not_seen_for_more_than_max_age_runs_is_dropped_and_a_reference_renews_it():
    cache = load_test.MessageCache()
    cache.max_age = 2
    diagram, raw = _element("the diagram", cacheable=True)
    cache.resolve(diagram, raw)
    cache.run_finished("")
    cache.run_finished("")
    assert cache.hashes() == [diagram.hash]
    cache.resolve(*_reference_to(diagram))  # sent again (as a reference) in the third run
    cache.run_finished("")
    cache.run_finished("")
    assert cache.hashes() == [diagram.hash]
    cache.run_finished("")
    assert cache.hashes() == []
    with pytest.raises(KeyError):
        cache.resolve(*_reference_to(diagram))


def test_a_fragment_run_ages_only_that_fragments_messages():
    cache = load_test.MessageCache()
    cache.max_age = 0
    page_chart, page_raw = _element("the page's chart", cacheable=True)
    fragment_chart, fragment_raw = _element("the fragment's chart", cacheable=True, fragment="f1")
    cache.resolve(page_chart, page_raw)
    cache.resolve(fragment_chart, fragment_raw)

    cache.run_finished("f1")
    assert cache.hashes() == [page_chart.hash]
    cache.run_finished("")
    assert cache.hashes() == []
