"""Input layouts, in-place updates and input checks as nvFuser has them (issue 11).

- ``define_tensor``'s ``contiguity`` lists the axes in allocation order (outermost
  first, by ``stride_order``), not per logical axis; ``from_pytorch`` computes both as
  nvFuser's ``computeTensorDescriptor``;
- an in-place update (``add_output(t, alias_input=x)``) of a non-contiguous input
  writes through the input's strides (reference and generated kernels);
- a returned output that is also written in place is the input tensor itself, in
  plain and segmented runs;
- a wrong kind of input raises nvFuser's message; ``is_cpu=True`` is only for 0-d
  tensors.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.frontend.fusion_definition import clone
from fuser.frontend.nvfuser_api import compute_tensor_descriptor
from fuser.ir.dialects.fuser import TensorType

torch = pytest.importorskip("torch")
pytest.importorskip("fuser.ir.reference")


def _relu_in_place(fd: FusionDefinition, contiguity: list[bool | None]) -> None:
    """nvFuser's test_inplace_update_on_non_contiguous_inputs definition."""
    t0 = fd.define_tensor(
        shape=[2, 2], contiguity=contiguity, dtype=DataType.Float, is_cpu=False, stride_order=[0, 1]
    )
    t2 = fd.ops.gt(t0, fd.define_scalar(0.0, dtype=DataType.Double))
    t4 = fd.ops.where(t2, t0, fd.define_scalar(0.0, dtype=DataType.Double))
    t6 = fd.ops.set(fd.ops.cast(t4, dtype=DataType.Float))
    fd.add_output(t6, t0)
    fd.add_output(t6)


def _define(fn: Any, *args: Any) -> FusionDefinition:
    with FusionDefinition() as fd:
        fn(fd, *args)
    return fd


# ---- contiguity in allocation order ------------------------------------------------------


def test_contiguity_is_given_in_allocation_order() -> None:
    # stride_order [0, 1]: axis 1 is outermost, so contiguity [False, True] says axis 1
    # is not contiguous and axis 0 is (the strides (1, 3) of nvFuser's test).
    fd = _define(_relu_in_place, [False, True])
    arg_type = fd.fusion().body.block.args[0].type
    assert isinstance(arg_type, TensorType)
    assert arg_type.get_contiguity() == (True, False)  # per logical axis in the IR
    assert (
        "contiguity=[False, True], dtype=DataType.Float, is_cpu=False, stride_order=[0, 1]"
        in repr(fd)
    )
    x = torch.randn(5).as_strided((2, 2), (1, 3))
    fd.execute([x])  # the old per-axis reading rejected it: axis 1 stride 3 != 2


def test_allocation_order_contiguity_rejects_a_non_contiguous_outer_axis() -> None:
    # [True, False] with stride_order [0, 1]: axis 1 (outermost) contiguous, axis 0 not.
    # The strides (1, 3) leave a gap after axis 1's extent: axis 1 is not contiguous.
    # (Read per logical axis, as before, the input was wrongly accepted.)
    fd = _define(_relu_in_place, [True, False])
    x = torch.randn(5).as_strided((2, 2), (1, 3))
    with pytest.raises(ValueError, match=r"input 0 \(T0\): axis 1 is declared contiguous"):
        fd.execute([x])
    fd.execute([torch.randn(4).as_strided((2, 2), (1, 2))])  # dense column-major: fine


def test_from_pytorch_records_nvfuser_tensor_descriptor() -> None:
    x = (
        torch.randn(2, 3).unsqueeze(-1).expand(2, 3, 4).transpose(2, 0)
    )  # (4, 3, 2), strides (0, 1, 3)
    contiguity, stride_order = compute_tensor_descriptor(list(x.shape), list(x.stride()))
    assert (contiguity, stride_order) == ([None, True, True], [2, 0, 1])

    def fn(fd: FusionDefinition) -> None:
        fd.add_output(fd.ops.mul(fd.from_pytorch(x), 3.0))

    fd = _define(fn)
    assert (
        "fd.define_tensor(shape=[-1, -1, -1], contiguity=[None, True, True], dtype=DataType.Float, "
        "is_cpu=False, stride_order=[2, 0, 1])" in repr(fd)
    )
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x * 3.0)


def test_expanded_axis_given_in_allocation_order() -> None:
    # nvFuser's test_stride_order_with_explicit_broadcast, input 3: allocation order
    # (axis 1, axis 0, axis 2); contiguity None belongs to axis 1 (stride 0, extent 16).
    def fn(fd: FusionDefinition) -> None:
        t3 = fd.define_tensor(
            shape=[-1, 16, 3],
            contiguity=[None, True, True],
            dtype=DataType.Float,
            stride_order=[1, 2, 0],
        )
        fd.add_output(fd.ops.mul(t3, 3.0))

    fd = _define(fn)
    arg_type = fd.fusion().body.block.args[0].type
    assert isinstance(arg_type, TensorType) and arg_type.get_contiguity() == (True, None, True)
    x = torch.randn(6).as_strided((2, 16, 3), (3, 0, 1))
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x * 3.0)


def test_from_mlir_keeps_allocation_order_contiguity() -> None:
    fd = _define(_relu_in_place, [False, True])
    again = FusionDefinition.from_mlir(fd.fusion_ir())
    assert (
        "contiguity=[False, True], dtype=DataType.Float, is_cpu=False, stride_order=[0, 1]"
        in repr(again)
    )
    assert again.fusion().body.block.args[0].type == fd.fusion().body.block.args[0].type


# ---- in-place update of a non-contiguous input -----------------------------------------


def test_inplace_update_of_non_contiguous_input_writes_through_its_strides() -> None:
    fd = _define(_relu_in_place, [False, True])
    base = torch.tensor([0.5, -1.0, -7.0, 2.0, -3.0])
    x = base.as_strided((2, 2), (1, 3))  # elements 0, 1, 3, 4; element 2 is a gap
    expected = x.clone().relu()
    (out,) = fd.execute([x])
    for i in range(2):
        for j in range(2):
            assert x[i, j].item() == expected[i, j].item()
            assert out[i, j].item() == expected[i, j].item()
    assert base[2].item() == -7.0  # the gap is not written
    assert base.tolist() == [0.5, 0.0, -7.0, 2.0, 0.0]
    assert out.data_ptr() == x.data_ptr()  # the returned output is the input itself


def test_generated_kernel_writes_inplace_output_through_input_strides() -> None:
    from fuser.runtime.cpu_runner import run_segment_on_cpu
    from fuser.runtime.torch_arrays import torch_to_numpy

    fd = _define(_relu_in_place, [False, True])
    base = torch.tensor([0.5, -1.0, -7.0, 2.0, -3.0])
    x = torch_to_numpy(base.as_strided((2, 2), (1, 3)))
    (out,), _ = run_segment_on_cpu(fd.fusion(), [x])
    assert base.tolist() == [0.5, 0.0, -7.0, 2.0, 0.0]
    np.testing.assert_array_equal(out, [[0.5, 2.0], [0.0, 0.0]])


# ---- returned outputs that are also in-place outputs -------------------------------------


def _returning_aliased(fd: FusionDefinition) -> None:
    """nvFuser's test_returning_aliased_outputs definition."""
    t0 = fd.define_tensor(
        shape=[-1, -1, -1, -1],
        contiguity=[True] * 4,
        dtype=DataType.Float,
        stride_order=[3, 2, 1, 0],
    )
    t2 = fd.ops.gt(t0, fd.define_scalar(0.0, dtype=DataType.Double))
    t4 = fd.ops.where(t2, t0, fd.define_scalar(0.0, dtype=DataType.Double))
    fd.add_output(t4)
    fd.add_output(t4, t0)
    fd.add_output(t4)
    fd.add_output(t0)


def test_returned_aliased_outputs_are_the_input() -> None:
    fd = _define(_returning_aliased)
    x = torch.randn(1, 2, 3, 4)
    expected = x.relu()
    outs = fd.execute([x])
    assert len(outs) == 3
    for o in outs:
        assert o.data_ptr() == x.data_ptr()
        torch.testing.assert_close(o, expected)


def test_segmented_run_of_input_that_is_also_an_output() -> None:
    fd = _define(_returning_aliased)
    cloned = FusionDefinition()
    clone(fd, cloned)
    x = torch.randn(1, 2, 3, 4)
    expected = x.relu()
    cloned.segment([x.clone()])
    seg = cloned.segmentation
    assert seg.input_indices == (0,) and seg.output_indices == (4, 4, 0)
    outs = cloned.execute([x])  # raised: segment 0 reads original value 0, ...
    assert len(outs) == 3
    for o in outs:
        assert o.data_ptr() == x.data_ptr()
        torch.testing.assert_close(o, expected)


# ---- input kinds and dtypes: nvFuser's messages --------------------------------------------


def _tensor_times_scalar(fd: FusionDefinition) -> None:
    t0 = fd.define_tensor(
        shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0]
    )
    fd.add_output(fd.ops.mul(t0, fd.define_scalar()))


def test_mismatched_inputs_raise_nvfuser_messages() -> None:
    fd = _define(_tensor_times_scalar)
    t = torch.rand(15)
    cases: list[tuple[list[Any], str]] = [
        (
            [2.0, 2.0],
            "Expected input 0, T0, to be an at::Tensor but got scalar 2 (input 0 (T0): expected a tensor, got 2.0 (float))",
        ),
        (
            [t, t],
            "Expected input 1, d2, to be a scalar but got float tensor of rank 1 (input 1 (S1): expected a scalar",
        ),
        (
            [t.half(), 2.0],
            "Expected input 0, T0, to be bound to a tensor of dtype float, but got a tensor of dtype __half "
            "(input 0 (T0): expected dtype float32, got float16)",
        ),
        (
            [torch.rand(3, 5), 2.0],
            "Expected input 0, T0, to be bound to a tensor of rank 1, but got a tensor of rank 2",
        ),
        (
            [t, 2.0 + 1.0j],
            "Scalar value (2,1) is not compatible with the expected data type: double. (input 1 (S1): ",
        ),
    ]
    for inputs, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            fd.execute(inputs)
    (out,) = fd.execute([t, 2.0])
    torch.testing.assert_close(out, t * 2.0)


def test_scalar_input_names_count_nvfuser_scalars() -> None:
    # Extents: i0, i1 (the two -1), i2 (the static 4), the shared 0 (i3), then the constant
    # 2.0 (d4); the Int input is i5 and the Bool input b6.
    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(
            shape=[-1, -1, 4], contiguity=[True, True, True], dtype=DataType.Float
        )
        c = fd.define_scalar(2.0, dtype=DataType.Double)
        s_int = fd.define_scalar(dtype=DataType.Int)
        s_bool = fd.define_scalar(dtype=DataType.Bool)
        fd.add_output(fd.ops.where(s_bool, fd.ops.mul(fd.ops.mul(t0, c), s_int), t0))

    fd = _define(fn)
    x = torch.rand(2, 3, 4)
    with pytest.raises(
        ValueError,
        match=re.escape("Expected input 1, i5, to be a scalar but got float tensor of rank 3"),
    ):
        fd.execute([x, x, True])
    with pytest.raises(
        ValueError,
        match=re.escape("Expected input 2, b6, to be a scalar but got float tensor of rank 3"),
    ):
        fd.execute([x, 1, x])


# ---- is_cpu -----------------------------------------------------------------------------


def test_is_cpu_non_scalar_tensor_is_rejected_each_time() -> None:
    def fn(fd: FusionDefinition) -> None:
        fd.define_tensor(
            shape=[-1, -1],
            contiguity=[True, True],
            dtype=DataType.Int,
            is_cpu=True,
            stride_order=[1, 0],
        )

    for _ in range(2):  # a failed definition is not cached
        with pytest.raises(
            ValueError, match=re.escape("define_tensor T0: CPU non-scalar tensor is not supported!")
        ):
            _define(fn)


def test_is_cpu_scalar_tensor_is_accepted() -> None:
    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        s = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True)
        fd.add_output(fd.ops.mul(t0, s))

    fd = _define(fn)
    x = torch.rand(4)
    (out,) = fd.execute([x, torch.tensor(3.0)])
    torch.testing.assert_close(out, x * 3.0)


# ---- the same on the GPU ------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_inplace_update_of_non_contiguous_input_writes_through_its_strides() -> None:
    fd = _define(_relu_in_place, [False, True])
    base = torch.tensor([0.5, -1.0, -7.0, 2.0, -3.0], device="cuda")
    x = base.as_strided((2, 2), (1, 3))
    (out,) = fd.execute([x])
    assert base.tolist() == [0.5, 0.0, -7.0, 2.0, 0.0]
    assert out.data_ptr() == x.data_ptr()
    assert out.cpu().tolist() == [[0.5, 2.0], [0.0, 0.0]]


@pytest.mark.gpu
def test_gpu_returned_aliased_outputs_are_the_input() -> None:
    fd = _define(_returning_aliased)
    x = torch.randn(1, 2, 3, 4, device="cuda")
    expected = x.relu()
    outs = fd.execute([x])
    assert len(outs) == 3
    for o in outs:
        assert o.data_ptr() == x.data_ptr()
        torch.testing.assert_close(o, expected)
