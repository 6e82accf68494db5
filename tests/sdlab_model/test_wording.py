"""The one count-and-noun wording the model's reasons and the pages share."""

from __future__ import annotations

import pytest

from sdlab_model.wording import count


@pytest.mark.parametrize(
    ("number", "noun", "expected"),
    [
        (1, "replica", "1 replica"),
        (1.0, "model", "1 model"),
        (0, "minute", "0 minutes"),
        (2, "replica", "2 replicas"),
        (1024, "model", "1,024 models"),
        (12.0, "replica", "12 replicas"),
    ],
)
def test_a_count_of_one_is_singular_and_others_plural(number, noun, expected):
    assert count(number, noun) == expected
