"""``#fuser.target`` and ``set-target`` (issue 13, item 3: facts in the IR): the
attribute carries every ``GpuTarget`` property, round-trips, and is what the passes
that schedule and lower use; ``set-target`` changes no computation."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects.fuser import TARGET_FIELDS, FusionOp, TargetAttr
from fuser.ir.reference import run_fusion
from fuser.passes.set_target import SetTarget
from fuser.passes.target_option import TargetOptionError, resolve_target
from fuser.schedulers.target import H100, H200, GpuTarget, from_attr, to_attr

GELU = """
fuser.fusion @gelu(%x : !fuser.tensor<4x8xf32>, %s : f64) -> !fuser.tensor<4x8xf32> {
  %y = fuser.mul %x, %s : (!fuser.tensor<4x8xf32>, f64) -> !fuser.tensor<4x8xf32>
  %e = fuser.erf %y : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %e : !fuser.tensor<4x8xf32>
}
"""


def test_the_attribute_carries_every_gpu_target_property() -> None:
    names = [f.name for f in fields(GpuTarget) if f.name not in ("name", "compute_capability")]
    assert list(TARGET_FIELDS) == names


@pytest.mark.parametrize("target", [H100, H200, H100.with_(name="half", sm_count=66, memory_bandwidth_gbs=1.5)])
def test_round_trip_through_the_attribute_and_its_text(target: GpuTarget) -> None:
    attr = to_attr(target)
    attr.verify()
    assert from_attr(attr) == target
    module = ModuleOp([])
    module.attributes["fuser.target"] = attr
    again = parse_module(str(module))
    assert again.attributes["fuser.target"] == attr
    assert isinstance(again.attributes["fuser.target"], TargetAttr)


def test_set_target_changes_no_computation() -> None:
    """Differential: random inputs through the reference before and after."""
    rng = np.random.default_rng(0)
    module = parse_module(GELU)
    fusion = next(op for op in module.walk() if isinstance(op, FusionOp))
    inputs = [rng.standard_normal((4, 8)).astype(np.float32), 0.7]
    before = run_fusion(fusion, inputs)
    text_before = str(fusion)
    SetTarget(gpu="h200").apply(make_context(), module)
    assert from_attr(module.attributes["fuser.target"]) == H200
    assert str(fusion) == text_before
    after = run_fusion(fusion, inputs)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_resolve_target_prefers_the_module_and_refuses_a_disagreeing_option() -> None:
    module = parse_module(GELU)
    assert resolve_target(module, "", "select-schedulers") == H100  # no fact: the default
    assert resolve_target(module, "h200", "select-schedulers") == H200
    tiny = H100.with_(name="tiny", sm_count=4)
    module.attributes["fuser.target"] = to_attr(tiny)
    assert resolve_target(module, "", "select-schedulers") == tiny
    with pytest.raises(TargetOptionError, match="select-schedulers: gpu=h100 but the module's fuser.target is 'tiny'"):
        resolve_target(module, "h100", "select-schedulers")
    with pytest.raises(TargetOptionError, match="lower-to-kernels: unknown GPU target 'a100'"):
        resolve_target(module, "a100", "lower-to-kernels")
