"""The wording the model's reasons and the pages share: counts and dollars."""

from __future__ import annotations

import math

import pytest

from sdlab_model.wording import count, money


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


@pytest.mark.parametrize(
    ("usd", "expected"),
    [(0.5, "$0.50"), (99.994, "$99.99"), (1234.4, "$1,234"), (math.inf, "—"), (math.nan, "—")],
)
def test_dollars_read_to_the_cent_below_a_hundred_and_whole_above(usd, expected):
    assert money(usd) == expected
