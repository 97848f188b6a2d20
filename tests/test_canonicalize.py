"""Differential tests of ``canonicalize``: the reference interpreter gives the same
outputs before and after the pass, on random inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects.fuser import CastOp, FusionOp, PermuteOp, ReshapeOp, TensorType
from fuser.ir.dtypes import DType
from fuser.ir.reference import run_fusion
from fuser.passes.canonicalize import LOSSLESS_CASTS, CanonicalizePass, is_lossless
from fuser.tools.fuser_run import make_inputs

CASES = {
    "identities": """
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>, %z : f32) -> !fuser.tensor<4x8xf32> {
  %0 = fuser.reshape %a {new_shape = array<i64: 4, 8>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x8xf32>
  %1 = fuser.permute %0 {dims = array<i64: 0, 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %2 = fuser.cast %1 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %3 = fuser.slice %2 {starts = array<i64: 0, 0>, ends = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %4 = fuser.pad %3, %z {widths = array<i64: 0, 0>} : (!fuser.tensor<4x8xf32>, f32) -> !fuser.tensor<4x8xf32>
  fuser.output %4 : !fuser.tensor<4x8xf32>
}""",
    "casts": """
fuser.fusion @f(%a : !fuser.tensor<16xf16>, %b : !fuser.tensor<16xf32>, %i : !fuser.tensor<16xi32>) -> (!fuser.tensor<16xf64>, !fuser.tensor<16xf32>, !fuser.tensor<16xf16>, !fuser.tensor<16xf16>) {
  %0 = fuser.cast %a : (!fuser.tensor<16xf16>) -> !fuser.tensor<16xf32>
  %1 = fuser.cast %0 : (!fuser.tensor<16xf32>) -> !fuser.tensor<16xf64>
  %2 = fuser.cast %b : (!fuser.tensor<16xf32>) -> !fuser.tensor<16xf16>
  %3 = fuser.cast %2 : (!fuser.tensor<16xf16>) -> !fuser.tensor<16xf32>
  %4 = fuser.cast %0 : (!fuser.tensor<16xf32>) -> !fuser.tensor<16xf16>
  %5 = fuser.cast %i : (!fuser.tensor<16xi32>) -> !fuser.tensor<16xf64>
  %6 = fuser.cast %5 : (!fuser.tensor<16xf64>) -> !fuser.tensor<16xf16>
  fuser.output %1, %3, %4, %6 : !fuser.tensor<16xf64>, !fuser.tensor<16xf32>, !fuser.tensor<16xf16>, !fuser.tensor<16xf16>
}""",
    "views": """
fuser.fusion @f(%a : !fuser.tensor<2x10x40xf32>, %b : !fuser.tensor<2x3x4x5xf32>) -> (!fuser.tensor<20x2x20xf32>, !fuser.tensor<5x2x4x3xf32>, !fuser.tensor<2x3x4x5xf32>) {
  %0 = fuser.reshape %a {new_shape = array<i64: 800>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<800xf32>
  %1 = fuser.reshape %0 {new_shape = array<i64: 20, 2, 20>} : !fuser.tensor<800xf32> -> !fuser.tensor<20x2x20xf32>
  %2 = fuser.permute %b {dims = array<i64: 3, 2, 1, 0>} : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<5x4x3x2xf32>
  %3 = fuser.permute %2 {dims = array<i64: 0, 3, 1, 2>} : (!fuser.tensor<5x4x3x2xf32>) -> !fuser.tensor<5x2x4x3xf32>
  %4 = fuser.set %b : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<2x3x4x5xf32>
  %5 = fuser.set %4 : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<2x3x4x5xf32>
  %6 = fuser.exp %5 : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<2x3x4x5xf32>
  fuser.output %1, %3, %5 : !fuser.tensor<20x2x20xf32>, !fuser.tensor<5x2x4x3xf32>, !fuser.tensor<2x3x4x5xf32>
}""",
    "transpose_bookend": open("examples/transpose_bookend_views.mlir").read().replace("768x128x64", "24x4x2").replace("64x12x128x64", "2x12x4x2").replace("64x128x12x64", "2x4x12x2").replace("64x128x768", "2x4x24").replace("8192x768", "8x24").replace("64, 12, 128, 64", "2, 12, 4, 2").replace("64, 128, 768", "2, 4, 24").replace("8192, 768", "8, 24").replace("split [64, 12]", "split [2, 12]"),
}


def _ops(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk()]


def _run(module: ModuleOp, inputs: list) -> list[np.ndarray]:
    fusion = next(op for op in module.walk() if isinstance(op, FusionOp))
    return [np.asarray(o) for o in run_fusion(fusion, [np.copy(i) if isinstance(i, np.ndarray) else i for i in inputs])]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_canonicalize_preserves_outputs(name: str, seed: int) -> None:
    before = parse_module(CASES[name])
    after = before.clone()
    CanonicalizePass().apply(make_context(), after)
    after.verify()
    assert len(_ops(after)) < len(_ops(before)), "the case must exercise a pattern"
    fusion = next(op for op in before.walk() if isinstance(op, FusionOp))
    inputs = make_inputs(fusion.inputs, "random", seed, [], ["0.0"] * sum(1 for a in fusion.inputs if not isinstance(a.type, TensorType)))
    want, got = _run(before, inputs), _run(after, inputs)
    assert len(want) == len(got)
    for w, g in zip(want, got, strict=True):
        assert w.dtype == g.dtype and w.shape == g.shape
        np.testing.assert_array_equal(w, g)


def test_lossy_cast_chain_is_kept() -> None:
    module = parse_module(CASES["casts"])
    CanonicalizePass().apply(make_context(), module)
    casts = [(op.input.type, op.result.type) for op in module.walk() if isinstance(op, CastOp)]
    f32, f16 = TensorType([16], DType.float32), TensorType([16], DType.float16)
    assert (f32, f16) in casts and (f16, f32) in casts  # f32 -> f16 -> f32 stays
    assert (TensorType([16], DType.float16), TensorType([16], DType.float64)) in casts


def test_reshape_of_reshape_recomputes_view() -> None:
    module = parse_module(CASES["views"])
    CanonicalizePass().apply(make_context(), module)
    reshapes = [op for op in module.walk() if isinstance(op, ReshapeOp)]
    assert len(reshapes) == 1
    assert reshapes[0].view is not None
    assert str(reshapes[0].view) == "#fuser.view<merge 2, split [2, 20]>"
    (perm,) = [op for op in module.walk() if isinstance(op, PermuteOp)]
    assert perm.get_dims() == [3, 0, 2, 1]


@pytest.mark.parametrize("src", list(DType))
def test_lossless_table_is_exact(src: DType) -> None:
    """Every cast the table calls lossless round-trips sample values exactly."""
    samples = {
        DType.bool: [False, True],
        DType.int32: [-(2**31), -1, 0, 2**31 - 1, 2**24 + 1],
        DType.int64: [-(2**63), 2**53 + 1, 2**63 - 1],
        DType.float16: [-65504.0, 6e-8, 0.1, np.inf, -0.0],
        DType.bfloat16: [3.0e38, 1e-38, 0.1, -np.inf],
        DType.float32: [3.4e38, 1e-45, 0.1, 16777217.0],
        DType.float64: [1e308, 5e-324, 0.1],
        DType.float8_e4m3fn: [448.0, -448.0, 2.0**-9, 0.1, -0.0],
        DType.float8_e5m2: [57344.0, 2.0**-16, -np.inf, 0.1, -0.0],
        DType.complex64: [3.4e38 + 1e-45j, 0.1 - 0.2j, complex(np.inf, -1.0)],
        DType.complex128: [1e308 + 5e-324j, 0.1 - 0.2j],
    }[src]
    x = np.array(samples).astype(src.to_numpy())
    for dst in DType:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # complex -> real
            y = x.astype(dst.to_numpy()).astype(src.to_numpy())
        exact = bool(np.array_equal(x, y))
        if is_lossless(src, dst):
            assert exact, f"{src.name} -> {dst.name} claimed lossless"
    assert src in LOSSLESS_CASTS[src]


def test_pass_is_registered_under_its_name() -> None:
    from fuser.passes import all_passes

    assert all_passes()["canonicalize"]() is CanonicalizePass
