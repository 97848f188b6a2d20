"""lower-to-kernels: the kernels it adds to the module compute what the fusion means.

Differential: for random inputs, the emitted ``kernel.func``s, run by the CPU kernel
interpreter with the launch recorded on them (``fuser.grid``, ``fuser.launch_args``),
give the reference interpreter's outputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from fuser.codegen.kernel_interpreter import run_kernel
from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import kernel as K
from fuser.ir.reference import run_fusion
from fuser.passes.bind_sizes import BindSizes
from fuser.passes.lower_to_kernels import LowerToKernelsError, LowerToKernelsPass
from fuser.passes.schedule_fusions import ScheduleFusions
from fuser.passes.select_schedulers import SelectSchedulers
from fuser.passes.sizes_option import SizesOptionError
from fuser.runtime.cpu_runner import flat_buffer, layout_of

POINTWISE_VIEWS = """
fuser.fusion @chain(%x : !fuser.tensor<6x40xf32>, %b : !fuser.tensor<40xbf16>) -> !fuser.tensor<240xf32> {
  %r = fuser.reshape %x {new_shape = array<i64: 2, 3, 40>} : !fuser.tensor<6x40xf32> -> !fuser.tensor<2x3x40xf32>
  %t = fuser.tanh %r : (!fuser.tensor<2x3x40xf32>) -> !fuser.tensor<2x3x40xf32>
  %s = fuser.add %t, %b : (!fuser.tensor<2x3x40xf32>, !fuser.tensor<40xbf16>) -> !fuser.tensor<2x3x40xf32>
  %o = fuser.reshape %s {new_shape = array<i64: 240>} : !fuser.tensor<2x3x40xf32> -> !fuser.tensor<240xf32>
  fuser.output %o : !fuser.tensor<240xf32>
}
"""

LAYER_NORM = """
fuser.fusion @ln(%x : !fuser.tensor<5x70xf32>, %w : !fuser.tensor<70xf32>) -> !fuser.tensor<5x70xf32> {
  %v, %m = fuser.var_mean %x {dims = array<i64: 1>, correction = 0.000000e+00 : f64, keepdim = true} : (!fuser.tensor<5x70xf32>) -> (!fuser.tensor<5x1xf32>, !fuser.tensor<5x1xf32>)
  %eps = fuser.constant 1.000000e-05 : f64
  %ve = fuser.add %v, %eps : (!fuser.tensor<5x1xf32>, f64) -> !fuser.tensor<5x1xf32>
  %r = fuser.rsqrt %ve : (!fuser.tensor<5x1xf32>) -> !fuser.tensor<5x1xf32>
  %d = fuser.sub %x, %m : (!fuser.tensor<5x70xf32>, !fuser.tensor<5x1xf32>) -> !fuser.tensor<5x70xf32>
  %n = fuser.mul %d, %r : (!fuser.tensor<5x70xf32>, !fuser.tensor<5x1xf32>) -> !fuser.tensor<5x70xf32>
  %y = fuser.mul %n, %w : (!fuser.tensor<5x70xf32>, !fuser.tensor<70xf32>) -> !fuser.tensor<5x70xf32>
  fuser.output %y : !fuser.tensor<5x70xf32>
}
"""

COLUMN_SUM = """
fuser.fusion @cols(%x : !fuser.tensor<37x40xbf16>) -> !fuser.tensor<40xf32> {
  %f = fuser.cast %x : (!fuser.tensor<37x40xbf16>) -> !fuser.tensor<37x40xf32>
  %s = fuser.sum %f {dims = array<i64: 0>} : (!fuser.tensor<37x40xf32>) -> !fuser.tensor<40xf32>
  fuser.output %s : !fuser.tensor<40xf32>
}
"""


def lowered(text: str, passes) -> ModuleOp:
    module = parse_module(text)
    ctx = make_context()
    for p in passes:
        p.apply(ctx, module)
    module.verify()
    return module


def run_kernels(module: ModuleOp, fusion: F.FusionOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run the kernels listed on ``fusion`` the way the runtime launches them."""
    names = [a.root_reference.data for a in fusion.attributes["fuser.kernels"].data]
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, K.FuncOp)}
    outs = [np.full(t.get_shape(), np.nan, F.dtype_of(t).to_numpy()) for t in fusion.function_type.outputs.data]
    scratch: dict[int, np.ndarray] = {}
    for name in names:
        func = funcs[name]
        args = []
        for spec in func.attributes["fuser.launch_args"].data:
            kind, index = spec.data.split()
            if kind == "input":
                x = inputs[int(index)]
                args.append(flat_buffer(x, layout_of(x)))
            elif kind == "output":
                args.append(outs[int(index)].reshape(-1))
            else:  # scratch buffers of multi-kernel lowerings: sized generously here
                args.append(scratch.setdefault(int(index), np.zeros(1 << 16, np.float32)))
        run_kernel(module, name, args, tuple(func.attributes["fuser.grid"].get_values()))
    return outs


@pytest.mark.parametrize("text", [POINTWISE_VIEWS, LAYER_NORM, COLUMN_SUM], ids=["pointwise", "inner", "outer"])
def test_emitted_kernels_match_the_reference(text: str) -> None:
    module = lowered(text, [SelectSchedulers(), ScheduleFusions(), LowerToKernelsPass()])
    fusion = next(op for op in module.ops if isinstance(op, F.FusionOp))
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(t.get_shape()).astype(F.dtype_of(t).to_numpy()) for t in fusion.function_type.inputs.data]
    expected = run_fusion(fusion, [x.copy() for x in inputs])
    got = run_kernels(module, fusion, inputs)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("passes", [[], [SelectSchedulers()]], ids=["bare", "selected"])
def test_without_a_loop_nest_nothing_is_lowered(passes: list) -> None:
    """The lowering reads only the written schedule: it never asks the schedulers."""
    with pytest.raises(LowerToKernelsError, match="@chain has no loop nest .*schedule-fusions"):
        lowered(POINTWISE_VIEWS, [*passes, LowerToKernelsPass()])


def test_symbolic_sizes_are_bound_by_bind_sizes() -> None:
    module = parse_module(COLUMN_SUM.replace("37x40", "?x40"))
    with pytest.raises(SizesOptionError, match="lower-to-kernels: input #0 of @cols has symbolic extents"):
        LowerToKernelsPass().apply(make_context(), module)
    module = parse_module(COLUMN_SUM.replace("37x40", "?x40"))
    for p in (BindSizes("0=37x40"), SelectSchedulers(), ScheduleFusions(), LowerToKernelsPass()):
        p.apply(make_context(), module)
    assert any(isinstance(op, K.FuncOp) for op in module.ops)


def test_issue6_pipeline_prints_one_kernel_that_nvrtc_compiles() -> None:
    """fuser-opt --strip-bookend-views --segment -p <scheduling, lowering> -t cuda on
    the GELU example: one kernel, compiled by NVRTC for sm_90."""
    import subprocess
    import sys
    from pathlib import Path

    from fuser.codegen.nvrtc import compile_cuda

    example = Path(__file__).resolve().parent.parent / "examples" / "gelu_bookend_views.mlir"
    cmd = [sys.executable, "-m", "fuser.tools.fuser_opt", "--strip-bookend-views", "--segment",
           "-p", "select-schedulers,schedule-fusions,lower-to-kernels", str(example), "-t", "cuda"]
    src = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent).stdout
    assert src.count("__global__") == 1
    compiled = compile_cuda(src, name="gelu_seg0_kernel", fusion="gelu")
    assert compiled.arch == "sm_90" and compiled.image
