"""Fixtures for the AppTest suite (helpers live in apptest_helpers.py)."""

from __future__ import annotations

import pytest
from apptest_helpers import assert_no_exception, open_app
from streamlit.testing.v1 import AppTest

from sdlab_model.queues import kernels
from sdlab_model.queues.warmup import warm_up


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """The kernels compiled (or loaded from numba's cache) before the first app run, as
    ``python3 dev.py run`` does: no app run then starts a background compile, whose plain twins
    would stand in for the kernels other tests patch."""
    kernels.compile_in_background(warm_up)
    kernels.wait_until_compiled()


@pytest.fixture
def lab() -> AppTest:
    """The Lab page at default settings."""
    app = open_app()
    assert_no_exception(app)
    return app
