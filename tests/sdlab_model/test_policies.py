"""One code per load-balancer policy, and no kernel compares a policy with a bare number."""

from __future__ import annotations

import ast
from pathlib import Path

from sdlab_model.params import LB_POLICIES
from sdlab_model.policies import Policy

MODEL_DIR = Path(__file__).resolve().parents[2] / "sdlab_model"


def test_every_policy_has_one_code_of_its_own():
    assert {policy.name.lower() for policy in Policy} == set(LB_POLICIES), (
        f"Policy's members {[p.name for p in Policy]} are not the inputs' {LB_POLICIES}"
    )
    assert len(Policy.__members__) == len({int(policy) for policy in Policy}), (
        f"two policies share a code: {dict(Policy.__members__)}"
    )
    for name in LB_POLICIES:
        assert Policy.of(name).name.lower() == name, f"Policy.of({name!r}) is {Policy.of(name)!r}"


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _is_policy_literal(node: ast.AST) -> bool:
    """``policy == 2``, ``1 if lb_policy == "round_robin" else 0``, ``{"random": 0}``."""
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        return any("policy" in ast.unparse(side).lower() for side in sides) and any(
            _is_int(side) for side in sides
        )
    if isinstance(node, ast.IfExp):
        return "policy" in ast.unparse(node.test) and _is_int(node.body) and _is_int(node.orelse)
    if isinstance(node, ast.Dict):
        return any(
            isinstance(key, ast.Constant) and key.value in LB_POLICIES and _is_int(value)
            for key, value in zip(node.keys, node.values, strict=True)
        )
    return False


def policy_literals(source: str) -> list[str]:
    """Every policy code written as a number in ``source`` (see ``_is_policy_literal``)."""
    return [ast.unparse(node) for node in ast.walk(ast.parse(source)) if _is_policy_literal(node)]


def test_the_scan_sees_a_literal_code():
    assert policy_literals("if policy == 2:\n    pass") == ["policy == 2"], "missed policy == 2"
    assert policy_literals("x = 1 if workload.lb_policy == 'round_robin' else 0"), (
        "missed a code chosen by the policy's name"
    )
    assert policy_literals("CODES = {'random': 0}"), "missed codes keyed by policy names"
    assert not policy_literals("if policy == POLICY_ROUND_ROBIN:\n    pass"), "a named code"


def test_no_module_writes_a_policy_code_as_a_number():
    offenders = [
        f"{path.relative_to(MODEL_DIR.parent)}: {literal}"
        for path in sorted(MODEL_DIR.rglob("*.py"))
        for literal in policy_literals(path.read_text())
    ]
    assert not offenders, "policy codes written as numbers (use Policy):\n" + "\n".join(offenders)
