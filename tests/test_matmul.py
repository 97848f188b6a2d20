"""``fuser.matmul`` and ``fuser.linear`` on the CPU: torch's shape rules, the reference
semantics (float32 accumulation for half types), the frontend (``fd.ops.matmul``,
``fd.ops.linear``), scheduler selection (only the ``matmul`` scheduler takes them,
alone) and segmentation (a segment each, the same outputs as the unsegmented
reference, with the kernel interpreter running the segments around them)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.reference import InterpreterError, run_fusion
from fuser.passes.bind_sizes import BindSizes
from fuser.passes.schedule_fusions import ScheduleFusions
from fuser.passes.segment import SegmentPass
from fuser.passes.select_schedulers import SelectSchedulers
from fuser.runtime.cpu_runner import KernelHostEvaluator
from fuser.runtime.host_evaluator import run_program
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.matmul import MatmulScheduler
from fuser.schedulers.registry import select
from fuser.schedulers.target import H100

BF16 = ml_dtypes.bfloat16
RNG = np.random.default_rng(0)


def _fd_matmul(dt: DataType, ra: int, rb: int) -> FusionDefinition:
    with FusionDefinition() as fd:
        a = fd.define_tensor([-1] * ra, dtype=dt)
        b = fd.define_tensor([-1] * rb, dtype=dt)
        fd.add_output(fd.ops.matmul(a, b))
    return fd


@pytest.mark.parametrize(
    ("sa", "sb"),
    [
        ((5,), (5,)),  # dot: a 0-d result
        ((7, 5), (5,)),  # matrix-vector
        ((5,), (5, 3)),  # vector-matrix
        ((7, 5), (5, 3)),
        ((2, 7, 5), (5, 3)),  # batched by a matrix
        ((7, 5), (4, 5, 3)),
        ((2, 1, 7, 5), (3, 5, 6)),  # batch axes broadcast: [2, 3, 7, 6]
        ((4, 5), (2, 3, 5, 1)),
    ],
)
def test_matmul_shapes_and_values_follow_numpy(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    fd = _fd_matmul(DataType.Double, len(sa), len(sb))
    (out,) = fd.execute([a, b])
    ref = np.matmul(a, b)
    assert np.shape(out) == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


def test_half_types_accumulate_in_float32_and_round_once() -> None:
    # 4096 products of 1 + 2^-8: every partial sum in bf16 would stop growing at 256;
    # float32 accumulation gives 4096 * (1 + 2^-8) = 4112, rounded once to bf16 (4096
    # or 4128: 4112 is between them; round to nearest even gives 4096).
    k = 4096
    a = np.full((1, k), 1 + 2.0**-8, np.float32).astype(BF16)
    b = np.ones((k, 1), np.float32).astype(BF16)
    (out,) = _fd_matmul(DataType.BFloat16, 2, 2).execute([a, b])
    assert out.dtype == BF16
    exact = np.float32(a.astype(np.float32) @ b.astype(np.float32))
    assert float(out[0, 0]) == float(np.asarray(exact, np.float32).astype(BF16).reshape(()))
    assert float(out[0, 0]) >= 4096


@pytest.mark.parametrize("bias", [None, "vector", "scalar"])
@pytest.mark.parametrize("x_shape", [(6, 8), (2, 3, 8), (8,)])
def test_linear_is_x_times_w_transposed_plus_bias(bias: str | None, x_shape: tuple[int, ...]) -> None:
    x = RNG.standard_normal(x_shape).astype(np.float32)
    w = RNG.standard_normal((5, 8)).astype(np.float32)
    b = {"vector": RNG.standard_normal(5).astype(np.float32), "scalar": np.array(0.5, dtype=np.float32)}.get(
        bias or ""
    )
    with FusionDefinition() as fd:
        tx = fd.define_tensor([-1] * len(x_shape), dtype=DataType.Float)
        tw = fd.define_tensor([-1, -1], dtype=DataType.Float)
        tb = None if b is None else fd.define_tensor([-1] * b.ndim, dtype=DataType.Float)
        fd.add_output(fd.ops.linear(tx, tw, tb))
    inputs = [x, w] + ([] if b is None else [b])
    (out,) = fd.execute(inputs)
    ref = x @ w.T + (0 if b is None else b)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    if b is not None:
        assert "fd.ops.linear(T0, T1, bias=T2)" in repr(fd)


def test_linear_with_a_vector_weight_drops_the_feature_axis() -> None:
    x, w = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    with FusionDefinition() as fd:
        tx = fd.define_tensor([-1, -1], dtype=DataType.Double)
        tw = fd.define_tensor([-1], dtype=DataType.Double)
        fd.add_output(fd.ops.linear(tx, tw))
    (out,) = fd.execute([x, w])
    np.testing.assert_allclose(out, x @ w)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda fd, a, b: fd.ops.matmul(a, fd.ops.cast(b, DataType.Float)), "matmul: operand b has dtype float32, but operand a has bfloat16"),
        (lambda fd, a, b: fd.ops.linear(a, b, a), "linear: bias has shape"),
        (lambda fd, a, b: fd.ops.matmul(a, fd.define_scalar(1.0)), "matmul: arg2"),
    ],
)
def test_frontend_errors_name_the_op_and_operand(build, message: str) -> None:
    with pytest.raises(ValueError, match=message), FusionDefinition() as fd:
        a = fd.define_tensor([4, 4], dtype=DataType.BFloat16)
        b = fd.define_tensor([4, 4], dtype=DataType.BFloat16)
        build(fd, a, b)


def test_wrong_runtime_extents_are_value_errors() -> None:
    fd = _fd_matmul(DataType.Float, 2, 2)
    with pytest.raises(ValueError, match="fuser.matmul: the contracted extents differ: 4 in operand a, 5 in operand b"):
        fd.execute([np.ones((3, 4), np.float32), np.ones((5, 2), np.float32)])


def test_from_mlir_round_trips_the_definition() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1], dtype=DataType.BFloat16)
        w = fd.define_tensor([-1, -1], dtype=DataType.BFloat16)
        b = fd.define_tensor([-1], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.relu(fd.ops.linear(x, w, b)))
        fd.add_output(fd.ops.matmul(x, fd.ops.permute(w, [1, 0])))
    again = FusionDefinition.from_mlir(fd.to_mlir() if hasattr(fd, "to_mlir") else str(fd.ir()))
    assert repr(again).count("fd.ops.linear(") == 1 and repr(again).count("fd.ops.matmul(") == 1


MLP = """
fuser.fusion @mlp(%x : !fuser.tensor<?x?xbf16>, %w1 : !fuser.tensor<?x?xbf16>, %b1 : !fuser.tensor<?xbf16>,
                  %w2 : !fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xbf16> {
  %h = fuser.linear %x, %w1, %b1 : (!fuser.tensor<?x?xbf16>, !fuser.tensor<?x?xbf16>, !fuser.tensor<?xbf16>) -> !fuser.tensor<?x?xbf16>
  %hf = fuser.cast %h {dtype = f32} : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %g = fuser.relu %hf : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %gb = fuser.cast %g {dtype = bf16} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xbf16>
  %y = fuser.linear %gb, %w2 : (!fuser.tensor<?x?xbf16>, !fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xbf16>
  %xf = fuser.cast %x {dtype = f32} : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %yf = fuser.cast %y {dtype = f32} : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %r = fuser.add %yf, %xf : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %rb = fuser.cast %r {dtype = bf16} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xbf16>
  fuser.output %rb : !fuser.tensor<?x?xbf16>
}
"""
MLP_SHAPES = [(16, 32), (64, 32), (64,), (32, 64)]


def _mlp_inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * 0.5).astype(BF16) for s in MLP_SHAPES]


def _segmented_mlp():
    module = parse_module(MLP)
    ctx = make_context()
    BindSizes(sizes=",".join("x".join(map(str, s)) for s in MLP_SHAPES)).apply(ctx, module)
    SegmentPass().apply(ctx, module)
    SelectSchedulers().apply(ctx, module)
    ScheduleFusions().apply(ctx, module)
    module.verify()
    return module


def _fusions(module) -> dict[str, F.FusionOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, F.FusionOp)}


def test_segmentation_gives_each_linear_its_own_segment() -> None:
    module = _segmented_mlp()
    kinds = {}
    for name, f in _fusions(module).items():
        shapes = [tuple(a.type.get_shape()) for a in f.body.block.args]
        kinds[name] = select(f, bind_sizes(f, shapes), H100).kind
    assert kinds == {"mlp_seg0": "matmul", "mlp_seg1": "pointwise", "mlp_seg2": "matmul", "mlp_seg3": "pointwise"}
    program = next(op for op in module.ops if isinstance(op, H.ProgramOp))
    assert [op.callee.string_value() for op in program.body.walk() if isinstance(op, H.LaunchOp)] == [
        "mlp_seg0", "mlp_seg1", "mlp_seg2", "mlp_seg3"
    ]


@pytest.mark.parametrize("seed", range(3))
def test_segmented_program_equals_the_reference(seed: int) -> None:
    """Differential: random inputs through the reference on the original fusion, and
    through the segmented host program, with the host evaluator (reference per
    segment) and with the kernel interpreter (generated kernels for the pointwise
    segments, the reference for the library ones)."""
    fusion = parse_module(MLP).ops.first
    assert isinstance(fusion, F.FusionOp)
    inputs = _mlp_inputs(seed)
    (expected,) = run_fusion(fusion, [x.copy() for x in inputs])
    module = _segmented_mlp()
    (by_reference,) = run_program(module, [x.copy() for x in inputs])
    (by_kernels,) = KernelHostEvaluator(module, nvrtc=False).run([x.copy() for x in inputs])
    np.testing.assert_array_equal(np.asarray(by_reference), np.asarray(expected))
    np.testing.assert_array_equal(np.asarray(by_kernels), np.asarray(expected))


def test_only_the_matmul_scheduler_takes_a_product_and_only_alone() -> None:
    module = parse_module(MLP)
    fusion = module.ops.first
    assert isinstance(fusion, F.FusionOp)
    sizes = bind_sizes(fusion, MLP_SHAPES)
    sel = select(fusion, sizes, H100)
    assert sel.kind is None
    reasons = dict(sel.rejections)
    assert reasons["pointwise"] == "fuser.linear runs in a library call (the matmul scheduler), not a generated kernel"
    assert reasons["matmul"].startswith("fuser.linear shares the fusion with fuser.add, fuser.cast, fuser.linear")
    assert MatmulScheduler.can_schedule_compile_time(fusion) is not None


def test_cast_into_a_linear_is_not_forwarded() -> None:
    """Input forwarding recomputes unary chains of inputs in every segment that reads
    them, but a library segment runs its op alone: the cast is a kernel of its own."""
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1], dtype=DataType.Float)
        w = fd.define_tensor([-1, -1], dtype=DataType.BFloat16)
        xb = fd.ops.cast(x, DataType.BFloat16)
        fd.add_output(fd.ops.add(fd.ops.linear(xb, w), xb))
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    w = RNG.standard_normal((16, 16)).astype(BF16)
    (out,) = fd.execute([x, w])
    xb32 = x.astype(BF16).astype(np.float32)
    y = (xb32 @ w.astype(np.float32).T).astype(BF16).astype(np.float32)
    np.testing.assert_array_equal(out, (y + xb32).astype(BF16))


def test_reference_names_a_bias_of_the_wrong_length() -> None:
    text = """
fuser.fusion @f(%x : !fuser.tensor<?x?xf32>, %w : !fuser.tensor<?x?xf32>, %b : !fuser.tensor<?xf32>) -> !fuser.tensor<?x?xf32> {
  %y = fuser.linear %x, %w, %b : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>, !fuser.tensor<?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}
"""
    fusion = parse_module(text).ops.first
    with pytest.raises(InterpreterError, match="fuser.linear: bias has 3 elements for 5 output features"):
        run_fusion(fusion, [np.ones((2, 4), np.float32), np.ones((5, 4), np.float32), np.ones(3, np.float32)])


def test_the_gpu_replay_keeps_library_calls_as_steps() -> None:
    """The cache-hit replay of a program with library segments (built on the CPU, as
    ``test_gpu_replay_build`` does): each library segment is one step taking its
    operands and output as whole buffers (inputs, allocations), between the kernel
    launches, in program order."""
    import types

    from fuser.runtime.driver import Signature, compile
    from fuser.runtime.gpu_arrays import DeviceArray
    from fuser.runtime.gpu_evaluator import GpuEvaluator
    from fuser.runtime.gpu_replay import _ALLOCATE, _FREE, _LAUNCH, _LIBRARY, Place, Replay
    from fuser.schedulers.target import DEFAULT_TARGET

    fusion = parse_module(MLP).ops.first
    flat = _mlp_inputs(0)
    exe = compile(fusion, Signature.of(fusion, flat), DEFAULT_TARGET)
    ev = GpuEvaluator(exe.module, lambda *a: [], 1, 0)

    def view(op: H.HostViewOp, x: DeviceArray) -> DeviceArray:
        hook, args = ev._view_call(op, list(x.shape))  # noqa: SLF001
        return hook(x, *args)

    fusions = [f for f in exe.module.ops if isinstance(f, F.FusionOp)]
    library = {}
    launched = {}
    for f in fusions:
        lib = next((op for op in f.body.block.ops if isinstance(op, F.LIBRARY_OPS)), None)
        name = f.sym_name.data
        if lib is None:
            launched[name] = types.SimpleNamespace(fusion=f)
        else:
            library[name] = types.SimpleNamespace(operand_inputs=[v.index for v in lib.operands], name=name)
    assert len(library) == 2 and len(launched) == 2
    places = [Place(k, 0, x.shape, tuple(s // x.itemsize for s in x.strides)) for k, x in enumerate(flat)]
    replay = Replay.build(exe.program, places, launched, view, "fuser", 0, library)
    assert replay is not None
    steps = [(s[0], s[1].name if s[0] == _LIBRARY else None) for s in replay.steps]
    assert [t for t, _ in steps] == [
        _ALLOCATE, _LIBRARY, _ALLOCATE, _LAUNCH, _FREE, _ALLOCATE, _LIBRARY, _FREE, _ALLOCATE, _LAUNCH, _FREE
    ]
    first = next(s for s in replay.steps if s[0] == _LIBRARY)
    # linear(x, w1, b1): the program's inputs 0, 1, 2 as they are; the output a whole
    # allocation (root 4, the first one).
    assert first[2] == [(0, None), (1, None), (2, None)] and first[3] == (4, None)


def test_gemm_on_padded_copies_equals_the_plain_gemm() -> None:
    """cuBLAS's fast kernels need 16-byte aligned leading dimensions and extents; a large
    GEMM on unaligned matrices (GPT-2's 50257-wide vocabulary) runs on zero-padded
    copies in each matrix's own orientation, into a padded output whose first rows and
    columns are copied back: the same values."""
    torch = pytest.importorskip("torch")
    from fuser.runtime.library_ops import gemm, is_aligned, padded

    gen = torch.Generator().manual_seed(0)
    a = torch.randn(33, 17, generator=gen)  # row-major, 68-byte rows
    b = torch.randn(50, 17, generator=gen).t()  # column-major, 68-byte columns
    bias = torch.randn(50, generator=gen)
    assert not is_aligned(a) and not is_aligned(b)
    pa, pb = padded(torch, a, 36, 20), padded(torch, b, 20, 52)
    assert pa.shape == (36, 20) and pa.stride() == (20, 1)
    assert pb.shape == (20, 52) and pb.stride() == (1, 20)  # still column-major
    assert is_aligned(pa) and is_aligned(pb)
    assert torch.equal(pa[:33, :17], a) and torch.equal(pb[:17, :50], b)
    assert not pa[33:].any() and not pa[:, 17:].any() and not pb[17:].any() and not pb[:, 50:].any()
    assert padded(torch, pa, 36, 20) is pa
    for bi in (None, bias):
        out = torch.empty(33, 50)  # 200-byte rows, odd extents: computed in a padded buffer
        gemm(torch, a, b, bi, out, pad=True)
        ref = torch.mm(a, b) if bi is None else torch.addmm(bi, a, b)
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    # bf16, K odd (GPT-2's LM-head backward: K = 50257): zero-padded K adds nothing.
    a16 = torch.randn(24, 1001, generator=gen).bfloat16()
    b16 = torch.randn(1001, 40, generator=gen).bfloat16()
    out16 = torch.empty(24, 40, dtype=torch.bfloat16)
    gemm(torch, a16, b16, None, out16, pad=True)
    torch.testing.assert_close(out16, torch.mm(a16, b16), rtol=2e-2, atol=2e-2)
    # Aligned extents with unaligned strides: aligned copies, no padding.
    a8, b8 = torch.randn(32, 17, generator=gen)[:, :16], torch.randn(40, 17, generator=gen)[:, :16].t()
    assert not is_aligned(a8) and not is_aligned(b8)
    out = torch.empty(32, 40)
    gemm(torch, a8, b8, None, out, pad=True)
    torch.testing.assert_close(out, torch.mm(a8, b8), rtol=1e-5, atol=1e-5)
