"""A hostile visitor's inputs: bad files, forged URLs and widget values never break a page.

Each case is one a hostile-visitor audit found breaking a page (issue 13); the page must show a
readable message, keep the lab as it was, and raise nothing.
"""

from __future__ import annotations

import json

import pytest
from apptest_helpers import assert_no_exception, headline_p99, open_app, sidebar_value

from sdlab_model import scenario_file
from sdlab_model.workload import Workload

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
