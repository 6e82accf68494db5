"""Fixtures for the AppTest suite (helpers live in apptest_helpers.py)."""

from __future__ import annotations

import pytest
from apptest_helpers import assert_no_exception, open_app
from streamlit.testing.v1 import AppTest


@pytest.fixture
def lab() -> AppTest:
    """The Lab page at default settings."""
    app = open_app()
    assert_no_exception(app)
    return app
