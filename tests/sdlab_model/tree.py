"""Walk a model result down to its leaves: the tests' one way to look at every field at once."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np


def leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every leaf inside ``value`` with its path: through dataclass instances, dicts, tuples,
    lists and numpy arrays (element by element), down to strings, numbers, bools and None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from leaves(getattr(value, field.name), f"{path}.{field.name}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}[{key!r}]")
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]")
    elif isinstance(value, np.ndarray):
        for index, item in enumerate(value.ravel()):
            yield f"{path}[{index}]", item
    else:
        yield path, value
