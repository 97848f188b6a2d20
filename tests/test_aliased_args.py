"""Kernel arguments that may point into one buffer (``codegen/aliased_args.py``): an
in-place update's input and output are declared without ``const`` and
``__restrict__`` (so NVRTC does not read them through the read-only path), what the
runtime launches (pointers) and what ``fd.generate_cuda_code`` shows (the program)
agree, and every other argument keeps ``__restrict__``."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.lower.common import TensorLayout
from fuser.codegen.nvrtc import CompileOptions, compile_cuda
from fuser.runtime.compile_fusion import written_in_place

PARAMS = re.compile(r"__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\((.*)\) \{")


def _update(alias: bool) -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        g = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.sub(x, fd.ops.mul(g, 0.1))
        if alias:
            fd.add_output(y, alias_input=x)
        else:
            fd.add_output(y)
    return fd


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((4096, 256), dtype=np.float32) for _ in range(2)]


def test_an_in_place_update_declares_its_input_and_output_plain_pointers() -> None:
    src = _update(alias=True).generate_cuda_code(_inputs())
    ((name, params),) = PARAMS.findall(src)
    assert params.split(", ")[:3] == ["float* in0", "const float* __restrict__ in1", "float* out0"]
    # The updated input is loaded through the coherent path, the other one read-only.
    ptx = compile_cuda(src, name=name, options=CompileOptions(arch="sm_90"), ptx=True).image
    text = ptx.decode() if isinstance(ptx, bytes) else ptx
    loads = re.findall(r"ld\.global(\.nc)?\.", text)
    assert "" in loads and ".nc" in loads


def test_without_an_alias_every_tensor_argument_stays_restrict() -> None:
    src = _update(alias=False).generate_cuda_code(_inputs())
    ((_, params),) = PARAMS.findall(src)
    assert params.split(", ")[:3] == [
        "const float* __restrict__ in0", "const float* __restrict__ in1", "float* __restrict__ out0",
    ]


def test_the_in_place_pairs_of_a_program_and_of_the_pointers_agree() -> None:
    from fuser.codegen.aliased_args import in_place_pairs
    from fuser.frontend import execution
    from fuser.schedulers.target import H100

    fd = _update(alias=True)
    ins = _inputs()
    entry = fd._ensure_defined()  # noqa: SLF001
    rt = execution.runtime_for(entry, ins)
    exe = execution.executable_for(entry, rt, ins, 0, H100)
    ((launch, seg),) = [(op, exe.callee(op)) for op in exe.launches]
    assert in_place_pairs(launch, seg) == ((0, 0),)  # output 0 is written into input 0
    # At run time the same pair comes from the pointers: output 0's buffer is input 0's.
    lay = TensorLayout.contiguous((4096, 256))
    assert written_in_place([0x1000, 0x9000], [lay, lay], [0x1000]) == ((0, 0),)
    assert written_in_place([0x1000, 0x9000], [lay, lay], [0x5000]) == ()
    # A scalar argument never aliases a buffer, whatever its value.
    assert written_in_place([0x1000, 0x5000], [lay, None], [0x5000]) == ()


@pytest.mark.parametrize("alias", [True, False])
def test_the_kernels_compute_the_same_update_either_way(alias: bool) -> None:
    """The CPU kernel interpreter runs the generated kernel: in place, the input holds
    the update afterwards."""
    from fuser.frontend.execution import execute_kernels_on_cpu

    fd = _update(alias)
    x, g = _inputs()
    want = x - g * np.float32(0.1)
    xs = x.copy()
    outs = execute_kernels_on_cpu(fd._ensure_defined(), [xs, g], nvrtc=False)  # noqa: SLF001
    if alias:  # written into the input, not returned
        assert outs == []
        np.testing.assert_allclose(xs, want, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_allclose(outs[0], want, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(xs, x)


def test_a_kernel_without_its_func_is_an_error_not_a_silent_restrict() -> None:
    """``mark_aliased_args`` must find the ``kernel.func`` of each kernel it marks; a
    kernel whose module lacks it raises instead of leaving the arguments
    ``__restrict__``."""
    from dataclasses import replace

    from fuser.codegen.aliased_args import mark_aliased_args
    from fuser.codegen.lower.common import LoweredFusion, LoweringError
    from fuser.frontend.execution import lowered_segments

    ((_, lowered),) = lowered_segments(_update(alias=False)._ensure_defined(), _inputs())  # noqa: SLF001
    renamed = LoweredFusion(lowered.scheduler, [replace(k, name="elsewhere") for k in lowered.kernels])
    with pytest.raises(LoweringError, match="kernel elsewhere: its module has no kernel.func @elsewhere"):
        mark_aliased_args(renamed, [(0, 0)])


def _two_outputs_of_x() -> Any:
    """The lowering of ``x + 1`` and ``x * 2`` (outputs 0 and 1 of one kernel)."""
    from fuser.frontend import execution

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(x, 1.0))
        fd.add_output(fd.ops.mul(x, 2.0))
    ((_, lowered),) = execution.lowered_segments(fd._ensure_defined(), [np.ones((8, 64), np.float32)])  # noqa: SLF001
    return lowered


@pytest.mark.parametrize("pair", [(0, 0), (1, 0)])
def test_a_store_group_loads_before_it_stores(pair: tuple[int, int]) -> None:
    """Either output may be written into ``x``: the kernel loads ``x`` once, computes
    both, then stores both."""
    from fuser.codegen.aliased_args import check_in_place_order

    lowered = _two_outputs_of_x()
    assert len(lowered.kernels) == 1
    check_in_place_order(lowered, [pair])


def test_a_load_after_the_store_of_the_in_place_output_is_an_error() -> None:
    from xdsl.dialects import vector

    from fuser.codegen.aliased_args import check_in_place_order
    from fuser.codegen.cuda_printer import kernels_of
    from fuser.codegen.lower.common import LoweringError

    lowered = _two_outputs_of_x()
    (kernel,) = lowered.kernels
    (func,) = kernels_of(kernel.module)
    out0 = func.args[[a.kind + str(a.index) for a in kernel.args].index("output0")]
    (store,) = [op for op in func.walk() if isinstance(op, vector.StoreOp) and op.base is out0]
    load = next(op for op in func.walk() if isinstance(op, vector.LoadOp))
    # Load x again after output 0's store: what the kernels did when each output
    # was computed and stored in turn.
    store.parent_block().insert_op_after(load.clone(), store)
    check_in_place_order(lowered, [(1, 0)])  # x is not loaded after output 1's store
    with pytest.raises(LoweringError, match=r"loads input #0 at an element where it stored output #0, which is written in place"):
        check_in_place_order(lowered, [(0, 0)])


def test_a_kernel_after_the_in_place_store_may_not_load_the_input() -> None:
    from fuser.codegen.aliased_args import check_in_place_order
    from fuser.codegen.lower.common import LoweredFusion, LoweringError

    (kernel,) = _two_outputs_of_x().kernels
    twice = LoweredFusion("pointwise", [kernel, kernel])
    with pytest.raises(LoweringError, match=r"after an earlier kernel stored output #1"):
        check_in_place_order(twice, [(1, 0)])


def test_the_branches_of_a_partial_vector_do_not_follow_each_other() -> None:
    """GPU run of 2026-11-30: a 1-D space of 1003 elements is a vector body where the
    whole vector is in bounds and lane by lane where it is not (``scf.if`` ... else);
    the edge loads the elements the body stored, but never in the same thread and
    call. After the ``if``, both branches' stores count: a load there is an error."""
    from xdsl.dialects import scf, vector

    from fuser.codegen.aliased_args import check_in_place_order
    from fuser.codegen.cuda_printer import kernels_of
    from fuser.codegen.lower.common import LoweringError
    from fuser.frontend import execution

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(x, 1.0))
    ((_, lowered),) = execution.lowered_segments(fd._ensure_defined(), [np.ones(1003, np.float32)])  # noqa: SLF001
    (kernel,) = lowered.kernels
    (func,) = kernels_of(kernel.module)
    (branch,) = [op for op in func.walk() if isinstance(op, scf.IfOp) and op.false_region.blocks]
    in_then = [op for op in branch.true_region.walk() if isinstance(op, vector.LoadOp)]
    in_else = [op for op in branch.false_region.walk() if not isinstance(op, vector.LoadOp) and op.name == "memref.load"]
    assert in_then and in_else  # the vector body and the lane-by-lane edge
    check_in_place_order(lowered, [(0, 0)])
    branch.parent_block().insert_op_after(in_then[0].clone(), branch)
    with pytest.raises(LoweringError, match=r"loads input #0 at an element where it stored output #0"):
        check_in_place_order(lowered, [(0, 0)])
