"""The Timeline's, the canary's, the replica GPU's and the LLM page's declarations agree with the
model they feed: the same ranges and defaults, fields that exist, no name twice."""

from __future__ import annotations

from dataclasses import fields

import pytest

from sdlab_model.llm import GPUS, INPUT_RANGES, MODELS, LlmWorkload
from sdlab_model.overload.storm import BURST_RANGES, Burst
from sdlab_model.page_params import (
    ACCELERATOR_INPUT,
    BURST_INPUTS,
    CANARY_INPUTS,
    LLM_CHOICES,
    LLM_INPUTS,
    TIMELINE_CHOICES,
    TIMELINE_INPUTS,
    TIMELINE_KNOBS,
    WORKLOAD_DEFAULTS,
)
from sdlab_model.params import NUMERIC_INPUTS
from sdlab_model.residency import ACCELERATOR_IDS, ResidencyInputs
from sdlab_model.timeline import AutoscalerConfig, canary
from sdlab_model.timeline.autoscalers import KNOB_RANGES

_PAGE_INPUTS = (*TIMELINE_INPUTS, *CANARY_INPUTS, *LLM_INPUTS, *BURST_INPUTS)


@pytest.mark.parametrize("spec", _PAGE_INPUTS, ids=lambda spec: spec.name)
def test_every_typed_input_has_a_step_and_its_default_in_range(spec):
    assert spec.step is not None and spec.step > 0, f"{spec.name}: a typed box needs a step"
    assert spec.scale == "linear", f"{spec.name}: a typed box is linear"
    assert spec.minimum <= spec.default <= spec.maximum, f"{spec.name}: default out of range"


def test_no_name_is_declared_twice_within_a_page():
    for table in (TIMELINE_INPUTS + TIMELINE_CHOICES, CANARY_INPUTS, LLM_INPUTS + LLM_CHOICES):
        names = [spec.name for spec in table]
        assert len(names) == len(set(names)), f"names declared twice: {names}"


def test_each_knob_is_the_autoscalers_range_and_default():
    defaults = {f.name: f.default for f in fields(AutoscalerConfig)}
    by_name = {spec.name: spec for spec in TIMELINE_INPUTS}
    assert set(TIMELINE_KNOBS.values()) <= set(KNOB_RANGES), "a knob the model does not bound"
    for name, knob in TIMELINE_KNOBS.items():
        spec = by_name[name]
        assert (spec.minimum, spec.maximum) == KNOB_RANGES[knob], f"{name}: range"
        assert spec.default == defaults[knob], f"{name}: default"
    assert set(by_name) >= WORKLOAD_DEFAULTS, "a workload default for an undeclared input"


def test_each_canary_input_sets_a_plan_field_from_its_bound_default():
    plan = canary.CanaryPlan()
    plan_fields = {f.name for f in fields(canary.CanaryPlan)}
    for spec in CANARY_INPUTS:
        assert spec.source in plan_fields, f"{spec.name}: {spec.source} is no CanaryPlan field"
        scale = {"min": 60.0, "s": 1.0}.get(spec.unit, 0.01)
        assert spec.default * scale == pytest.approx(getattr(plan, spec.source)), spec.name


def test_the_replica_gpu_offers_every_gpu_and_defaults_as_the_residency_model():
    assert ACCELERATOR_INPUT.choices == ACCELERATOR_IDS
    assert ACCELERATOR_INPUT.default == ResidencyInputs().accelerator
    assert len(ACCELERATOR_INPUT.choice_labels) == len(ACCELERATOR_IDS)


def test_the_sidebars_inputs_are_sliders():
    assert all(spec.step is None for spec in NUMERIC_INPUTS), "a sidebar input became a box"


def test_each_llm_input_is_an_llm_workload_field_with_the_models_range_and_default():
    defaults = {f.name: f.default for f in fields(LlmWorkload)}
    for spec in LLM_INPUTS:
        assert (spec.minimum, spec.maximum) == INPUT_RANGES[spec.name], f"{spec.name}: range"
        assert spec.default == defaults[spec.name], f"{spec.name}: default"
        assert spec.integer == isinstance(defaults[spec.name], int), f"{spec.name}: whole?"
    choices = {spec.name: spec for spec in LLM_CHOICES}
    assert choices["model_id"].choices == tuple(m.id for m in MODELS), "a model left out"
    assert choices["gpu_id"].choices == tuple(g.id for g in GPUS), "a GPU left out"
    for spec in LLM_CHOICES:
        assert spec.default == defaults[spec.name], f"{spec.name}: default"


def test_each_tail_input_is_a_tail_inputs_field_with_the_models_range_and_default():
    from sdlab_model.page_params import TAIL_INPUTS
    from sdlab_model.tail import TailInputs
    from sdlab_model.tail.judgement import TAIL_INPUT_RANGES

    defaults = {f.name: f.default for f in fields(TailInputs)}
    assert [spec.name for spec in TAIL_INPUTS] == list(defaults), "not every field, in order"
    for spec in TAIL_INPUTS:
        assert (spec.minimum, spec.maximum) == TAIL_INPUT_RANGES[spec.name], f"{spec.name}: range"
        assert spec.default == defaults[spec.name], f"{spec.name}: default"
        assert spec.step is not None or spec.scale == "log", f"{spec.name}: neither box nor log"


def test_each_burst_input_is_a_burst_field_with_its_range_and_default():
    burst = Burst()
    for spec in BURST_INPUTS:
        assert (spec.minimum, spec.maximum) == BURST_RANGES[spec.name], f"{spec.name}: range"
        assert spec.default == getattr(burst, spec.name), f"{spec.name}: default"
