"""Hypothesis strategies shared by the model tests: any valid input, straight from params.py."""

from __future__ import annotations

from hypothesis import strategies as st

from sdlab_model.params import NUMERIC_INPUTS, TOGGLE_INPUTS, NumericInput
from sdlab_model.workload import Workload


def input_values(spec: NumericInput) -> st.SearchStrategy:
    """Every value the input ``spec`` allows: whole numbers or finite floats in its range."""
    if spec.integer:
        return st.integers(int(spec.minimum), int(spec.maximum))
    return st.floats(spec.minimum, spec.maximum, allow_nan=False, allow_infinity=False)


WORKLOADS = st.builds(
    Workload,
    **{spec.name: input_values(spec) for spec in NUMERIC_INPUTS},
    **{toggle.name: st.booleans() for toggle in TOGGLE_INPUTS},
)
