"""Complex dtypes end to end: complex64/complex128 (nvFuser's ComplexFloat/ComplexDouble).

* the reference interpreter against torch for every op that accepts complex operands
  (unary, binary, where, cast, sum/prod), in both complex types;
* promotion (weak complex scalars, float64 with a complex scalar is complex128);
* the frontend: complex scalars, printing that re-executes, errors naming the op;
* the GPU lowering: kernels on complex inputs run by the CPU kernel interpreter equal
  the reference, and compile with NVRTC (``run_segment_on_cpu`` compiles every kernel
  it runs), for pointwise fusions and row/column sums.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.frontend.datatype import as_datatype
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType, result_type
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu

torch = pytest.importorskip("torch")

COMPLEX = [DType.complex64, DType.complex128]
TORCH_C = {DType.complex64: torch.complex64, DType.complex128: torch.complex128}
DATATYPE = {DType.complex64: DataType.ComplexFloat, DType.complex128: DataType.ComplexDouble}

UNARY_TORCH: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "abs": torch.abs, "neg": torch.neg, "real": torch.real, "imag": torch.imag,
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan,
    "tanh": torch.tanh, "isnan": torch.isnan, "isinf": torch.isinf,
    "isfinite": torch.isfinite, "set": torch.clone, "segment_set": torch.clone,
}  # fmt: skip
BINARY_TORCH: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "truediv": torch.true_divide, "eq": torch.eq, "ne": torch.ne,
}  # fmt: skip


def crand(shape: tuple[int, ...], dt: DType, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt.to_numpy())


def define(body: Callable[[FusionDefinition], None]) -> FusionDefinition:
    with FusionDefinition() as fd:
        body(fd)
    return fd


def assert_close(ours: np.ndarray, ref: torch.Tensor, rtol: float = 1e-5) -> None:
    ref_np = ref.resolve_conj().numpy() if ref.is_complex() else ref.numpy()
    assert ours.dtype == ref_np.dtype, (ours.dtype, ref_np.dtype)
    assert ours.shape == ref_np.shape
    np.testing.assert_allclose(ours, ref_np, rtol=rtol, atol=1e-6, equal_nan=True)


def test_complex_op_sets_have_torch_references() -> None:
    assert set(UNARY_TORCH) == F.COMPLEX_UNARY_OPS
    assert set(BINARY_TORCH) == F.COMPLEX_BINARY_OPS


# ---- dtypes and promotion ------------------------------------------------------------------


def test_dtype_mapping() -> None:
    assert DataType.ComplexFloat.to_dtype() is DType.complex64
    assert DataType.ComplexDouble.to_dtype() is DType.complex128
    assert as_datatype(torch.complex64) is DataType.ComplexFloat
    assert as_datatype(np.complex128) is DataType.ComplexDouble
    assert DType.complex64.real_dtype is DType.float32
    assert DType.float64.complex_dtype is DType.complex128
    assert str(DType.complex64.to_xdsl()) == "complex<f32>"
    assert DType.complex128.itemsize == 16


@pytest.mark.parametrize(
    "tensors,scalars,expected",
    [
        ([DType.complex64], [DType.complex128], DType.complex64),  # weak complex scalar
        ([DType.float64], [DType.complex128], DType.complex128),  # f64 keeps its width
        ([DType.float32], [DType.complex128], DType.complex64),
        ([DType.int32], [DType.complex128], DType.complex64),
        ([DType.complex64, DType.float64], [], DType.complex128),
        ([], [DType.complex128, DType.float32], DType.complex128),
    ],
)
def test_promotion_matches_torch(
    tensors: list[DType], scalars: list[DType], expected: DType
) -> None:
    assert result_type(tensors, scalars) is expected
    if not tensors:
        return  # scalars alone keep their own dtype (nvFuser), torch's default is complex64
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

    args = [torch.ones(2, dtype=getattr(torch, t.value)) for t in tensors]
    args += [1 + 1j if s.is_complex else 1.5 for s in scalars]
    kind = ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT
    assert elementwise_dtypes(*args, type_promotion_kind=kind)[1] == getattr(torch, expected.value)


def test_half_with_complex_is_rejected() -> None:
    with pytest.raises(ValueError, match="complex32"):
        result_type([DType.float16], [DType.complex128])


# ---- reference interpreter against torch ----------------------------------------------------


@pytest.mark.parametrize("dt", COMPLEX)
@pytest.mark.parametrize("name", sorted(UNARY_TORCH))
def test_unary_reference(name: str, dt: DType) -> None:
    x = crand((3, 7), dt)
    x[0, 0] = complex(np.inf, 1.0)  # the predicates see a non-finite value
    x[0, 1] = complex(0.0, np.nan)

    def body(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DATATYPE[dt])
        fd.add_output(getattr(fd.ops, name)(t))

    (ours,) = define(body).execute([x])
    ref = UNARY_TORCH[name](torch.from_numpy(x))
    assert_close(np.asarray(ours), ref, rtol=1e-5 if dt is DType.complex64 else 1e-12)


@pytest.mark.parametrize(
    "dts",
    [
        (DType.complex64, DType.complex64),
        (DType.complex64, DType.complex128),
        (DType.float32, DType.complex64),
        (DType.complex128, DType.float64),
    ],
)
@pytest.mark.parametrize("name", sorted(BINARY_TORCH))
def test_binary_reference(name: str, dts: tuple[DType, DType]) -> None:
    a_dt, b_dt = dts
    x = (
        crand((4, 5), a_dt, 1)
        if a_dt.is_complex
        else np.random.default_rng(1).standard_normal((4, 5)).astype(a_dt.to_numpy())
    )
    y = (
        crand((5,), b_dt, 2)
        if b_dt.is_complex
        else np.random.default_rng(2).standard_normal(5).astype(b_dt.to_numpy())
    )
    if a_dt == b_dt:
        y[0] = x[0, 0]  # eq sees an equal pair
    dmap = {**DATATYPE, DType.float32: DataType.Float, DType.float64: DataType.Double}

    def body(fd: FusionDefinition) -> None:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dmap[a_dt])
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dmap[b_dt])
        fd.add_output(getattr(fd.ops, name)(a, b))

    (ours,) = define(body).execute([x, y])
    assert_close(np.asarray(ours), BINARY_TORCH[name](torch.from_numpy(x), torch.from_numpy(y)))


@pytest.mark.parametrize("dt", COMPLEX)
def test_scalars_where_and_casts_against_torch(dt: DType) -> None:
    x = crand((6,), dt, 3)
    cond = np.array([True, False, True, True, False, False])

    def body(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DATATYPE[dt])
        c = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Bool)
        fd.add_output(fd.ops.mul(t, fd.define_scalar(complex(3.0, 0.5))))
        fd.add_output(fd.ops.where(c, t, fd.define_scalar(complex(-1.0, 2.0))))
        fd.add_output(fd.ops.cast(t, DataType.Float))
        fd.add_output(fd.ops.cast(t, DataType.Int))
        fd.add_output(fd.ops.cast(t, DataType.Bool))
        fd.add_output(fd.ops.cast(fd.ops.real(t), DATATYPE[dt]))
        fd.add_output(fd.ops.cast(t, DataType.ComplexDouble))

    outs = [np.asarray(o) for o in define(body).execute([x, cond])]
    tx, tc = torch.from_numpy(x), torch.from_numpy(cond)
    assert_close(outs[0], tx * (3.0 + 0.5j))
    assert_close(outs[1], torch.where(tc, tx, torch.tensor(-1.0 + 2.0j, dtype=TORCH_C[dt])))
    with warnings.catch_warnings():  # torch: "Casting complex values to real discards ..."
        warnings.simplefilter("ignore")
        assert_close(outs[2], tx.to(torch.float32))
        assert_close(outs[3], tx.to(torch.int64))
    assert_close(outs[4], tx.to(torch.bool))
    assert_close(outs[5], tx.real.to(TORCH_C[dt]))
    assert_close(outs[6], tx.to(torch.complex128))


@pytest.mark.parametrize("dt", COMPLEX)
@pytest.mark.parametrize("name,dims", [("sum", [-1]), ("sum", [0, 1]), ("prod", [0])])
def test_reductions_against_torch(name: str, dims: list[int], dt: DType) -> None:
    x = crand((3, 9), dt, 4) * 0.7

    def body(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DATATYPE[dt])
        fd.add_output(getattr(fd.ops, name)(t, dims, False, DATATYPE[dt]))

    (ours,) = define(body).execute([x])
    tx = torch.from_numpy(x)
    ref = torch.sum(tx, dims) if name == "sum" else torch.prod(tx, dims[0])
    assert_close(np.asarray(ours), ref, rtol=1e-5 if dt is DType.complex64 else 1e-12)


# ---- frontend ---------------------------------------------------------------------------


def test_complex_scalars_print_and_reexecute() -> None:
    def body(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.ComplexFloat)
        c = fd.define_scalar(complex(3.0, 0.5))
        s = fd.define_scalar(dtype=DataType.ComplexDouble)
        n = fd.define_scalar(complex(float("inf"), float("nan")), DataType.ComplexFloat)
        fd.add_output(fd.ops.add(fd.ops.mul(t, c), s))
        fd.add_output(fd.ops.isnan(fd.ops.mul(t, n)))

    fd = define(body)
    text = repr(fd)
    assert "fd.define_scalar(complex(3.0, 0.5), dtype=DataType.ComplexDouble)" in text
    assert "complex(float('inf'), float('nan'))" in text
    x = torch.randn(4, dtype=torch.complex64)
    out, nan = fd.execute([x, 1 - 2j])
    torch.testing.assert_close(out, x * (3.0 + 0.5j) + (1 - 2j))
    assert out.dtype == torch.complex64 and nan.all()
    scope: dict = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, scope)  # noqa: S102 - the printed definition rebuilds the fusion
    with FusionDefinition() as fd2:
        scope[next(k for k in scope if k.startswith("nvfuser_fusion"))](fd2)
    torch.testing.assert_close(fd2.execute([x, 1 - 2j])[0], out)


@pytest.mark.parametrize(
    "build,match",
    [
        (lambda fd, t: fd.ops.lt(t, t), r"lt: operand #0 is complex \(complex64\)"),
        (
            lambda fd, t: fd.ops.max(t, [0]),
            r"max: input is complex \(complex64\): complex values have no order",
        ),
        (lambda fd, t: fd.ops.relu(t), r"relu: operand #0 is complex"),
        (lambda fd, t: fd.ops.imag(fd.ops.abs(t)), r"imag: needs a complex operand, got float32"),
        (
            lambda fd, t: fd.ops.sum(t, [0], dtype=DataType.Float),
            r"sum: the result dtype float32 of a complex",
        ),
        (lambda fd, t: fd.ops.var(t, [0]), r"var: input is complex \(complex64\)"),
        (lambda fd, t: fd.ops.add(fd.ops.cast(t, DataType.Half), 1j), None),  # torch: complex32
    ],
)
def test_frontend_errors_name_the_op(build: Callable, match: str | None) -> None:
    with pytest.raises(
        ValueError,
        match=match or r"add: float16 with a complex value gives complex32, which is not supported",
    ):
        with FusionDefinition() as fd:
            t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.ComplexFloat)
            fd.add_output(build(fd, t))


def test_complex_value_for_a_real_scalar_is_rejected() -> None:
    with pytest.raises(ValueError, match="define_scalar"):
        with FusionDefinition() as fd:
            fd.define_scalar(1 + 2j, DataType.Double)


# ---- GPU lowering: CPU kernel interpreter and NVRTC -----------------------------------------


@pytest.mark.parametrize("dt", COMPLEX)
def test_pointwise_kernel_matches_reference_and_compiles(dt: DType) -> None:
    x = crand((70,), dt, 5)
    y = crand((70,), dt, 6)
    cond = np.random.default_rng(7).random(70) < 0.5

    def body(fd: FusionDefinition) -> None:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DATATYPE[dt])
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DATATYPE[dt])
        c = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Bool)
        for name in sorted(UNARY_TORCH):
            fd.add_output(getattr(fd.ops, name)(a))
        for name in sorted(BINARY_TORCH):
            fd.add_output(getattr(fd.ops, name)(a, b))
        fd.add_output(fd.ops.mul(a, fd.define_scalar(complex(3.0, 0.5))))
        fd.add_output(fd.ops.where(c, a, fd.define_scalar(complex(-1.0, 2.0))))
        fd.add_output(fd.ops.cast(a, DataType.Float))
        fd.add_output(fd.ops.cast(a, DataType.Bool))
        fd.add_output(fd.ops.cast(fd.ops.real(a), DATATYPE[dt]))

    fusion = define(body).fusion()
    ours, lowered = run_segment_on_cpu(fusion, [x, y, cond])  # also compiles with NVRTC
    ref = run_fusion(fusion, [x, y, cond])
    rtol = 2e-6 if dt is DType.complex64 else 1e-13
    for o, r in zip(ours, ref, strict=True):
        assert o.dtype == np.asarray(r).dtype
        np.testing.assert_allclose(o, r, rtol=rtol, atol=1e-6, equal_nan=True)
    src = print_cuda(lowered.kernels[0].module)
    part = "float" if dt is DType.complex64 else "double"
    assert f"fuser_complex<{part}>" in src and "fuser_crsqrt(" in src


def test_complex_preamble_only_when_used() -> None:
    def body(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(t))

    fusion = define(body).fusion()
    _, lowered = run_segment_on_cpu(fusion, [np.ones(8, np.float32)])
    assert "fuser_complex" not in print_cuda(lowered.kernels[0].module)


@pytest.mark.parametrize("dt", COMPLEX)
@pytest.mark.parametrize("shape,dims", [((2, 32), [-1]), ((5, 700), [1]), ((64, 3), [0])])
def test_sum_kernels_match_reference_and_compile(
    shape: tuple[int, int], dims: list[int], dt: DType
) -> None:
    x = crand(shape, dt, 8)

    def body(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DATATYPE[dt])
        fd.add_output(fd.ops.sum(t, dims, False, DATATYPE[dt]))

    fusion = define(body).fusion()
    (ours,), lowered = run_segment_on_cpu(fusion, [x])
    assert lowered.scheduler == "reduction"
    (ref,) = run_fusion(fusion, [x])
    np.testing.assert_allclose(ours, ref, rtol=1e-5 if dt is DType.complex64 else 1e-12, atol=1e-5)


def test_fuser_run_makes_parses_and_summarizes_complex_values() -> None:
    from fuser.tools.fuser_run import parse_scalar, random_value, summarize

    v = random_value(DType.complex64, [4], np.random.default_rng(0))
    assert v.dtype == np.complex64 and np.any(v.imag != 0)
    assert parse_scalar("1+2j", DType.complex128, "s") == 1 + 2j
    text = summarize("out0", np.array([3 + 4j, 1j], np.complex64))
    assert text.startswith("out0: shape (2,) complex64 max |x| 5") and "3+4j" in text


def _permute_exp(fd: FusionDefinition) -> None:
    t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.ComplexFloat)
    fd.add_output(fd.ops.permute(fd.ops.exp(t), [1, 0]))


def _row_centered(fd: FusionDefinition) -> None:
    t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.ComplexDouble)
    fd.add_output(fd.ops.sub(t, fd.ops.sum(t, [1], True)))


def _column_scaled(fd: FusionDefinition) -> None:
    t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.ComplexFloat)
    fd.add_output(fd.ops.mul(t, fd.ops.sum(t, [0], True)))


def _real_times_complex_sum_and_prod(fd: FusionDefinition) -> None:
    t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    u = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.ComplexFloat)
    fd.add_output(fd.ops.sum(fd.ops.mul(t, u), [1]))
    fd.add_output(fd.ops.abs(fd.ops.prod(u, [1])))


@pytest.mark.parametrize(
    "body,shapes,kind",
    [
        (_permute_exp, [((64, 96), DType.complex64)], "transpose"),
        (_row_centered, [((8, 300), DType.complex128)], "inner_persistent"),
        (_column_scaled, [((300, 8), DType.complex64)], "outer_persistent"),
        (
            _real_times_complex_sum_and_prod,
            [((4, 40), DType.float32), ((4, 40), DType.complex64)],
            "reduction",
        ),
    ],
)
def test_every_scheduler_lowers_complex(body: Callable, shapes: list, kind: str) -> None:
    rng = np.random.default_rng(9)
    inputs = [
        crand(shape, dt, 9) if dt.is_complex else rng.standard_normal(shape).astype(dt.to_numpy())
        for shape, dt in shapes
    ]
    fusion = define(body).fusion()
    ours, lowered = run_segment_on_cpu(fusion, inputs)
    assert lowered.scheduler == kind
    for o, r in zip(ours, run_fusion(fusion, inputs), strict=True):
        np.testing.assert_allclose(o, r, rtol=2e-5, atol=1e-5)


def test_gpu_arrays_know_the_complex_torch_dtypes() -> None:
    from fuser.runtime.gpu_arrays import torch_dtype

    assert torch_dtype(DType.complex64) is torch.complex64
    assert torch_dtype(DType.complex128) is torch.complex128


def test_definition_from_mlir_with_complex_constant_and_scalar_input() -> None:
    fd = FusionDefinition.from_mlir(
        "fuser.fusion @f(%0: !fuser.tensor<3xcomplex<f32>>, %s: complex<f64>) -> "
        "!fuser.tensor<3xcomplex<f32>> {\n"
        "  %c = fuser.constant [0.000000e+00 : f64, 1.000000e+00 : f64] : complex<f64>\n"
        "  %1 = fuser.mul %0, %c : (!fuser.tensor<3xcomplex<f32>>, complex<f64>) -> "
        "!fuser.tensor<3xcomplex<f32>>\n"
        "  %2 = fuser.add %1, %s : (!fuser.tensor<3xcomplex<f32>>, complex<f64>) -> "
        "!fuser.tensor<3xcomplex<f32>>\n"
        "  fuser.output %2 : !fuser.tensor<3xcomplex<f32>>\n}\n"
    )
    assert "fd.define_scalar(complex(0.0, 1.0), dtype=DataType.ComplexDouble)" in repr(fd)
    x = np.array([1, 2j, -1], np.complex64)
    (out,) = fd.execute([x, 1 + 2j])
    np.testing.assert_allclose(out, x * 1j + (1 + 2j))
    assert out.dtype == np.complex64


def test_complex_scalar_inputs_are_kernel_arguments() -> None:
    """A complex scalar input is a ``fuser_complex<T>`` kernel parameter; the driver
    packs it as (re, im) in a 8-byte (complex64) or 16-byte (complex128) slot."""
    from fuser.runtime.compile_fusion import kernel_signature

    x = (np.arange(70) + 1j).astype(np.complex64)

    def body(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.ComplexFloat)
        s = fd.define_scalar(dtype=DataType.ComplexDouble)
        f = fd.define_scalar(dtype=DataType.ComplexFloat)
        fd.add_output(fd.ops.add(fd.ops.mul(t, s), f))

    fusion = define(body).fusion()
    ins = [x, 1 + 2j, 0.5 - 1j]
    (out,), lowered = run_segment_on_cpu(fusion, ins)
    np.testing.assert_allclose(out, run_fusion(fusion, ins)[0], rtol=1e-6)
    src = print_cuda(lowered.kernels[0].module)
    assert "fuser_complex<double> in1, fuser_complex<float> in2" in src
    # tensor, complex128, complex64, output, then the symbolic length (int64)
    assert kernel_signature(fusion, lowered.kernels[0].args) == "pzcpq"
    try:
        from fuser.runtime.cuda_driver import arg_offsets, flatten_complex_args
    except ImportError:  # no CUDA Python bindings here
        return
    fmt, offsets, words = arg_offsets("pzcp")
    assert (fmt, offsets, words) == ("<QddffQ", [0, 8, 24, 32], 5)
    assert flatten_complex_args("pzcp", [7, 1 + 2j, 0.5 - 1j, 9]) == [7, 1.0, 2.0, 0.5, -1.0, 9]
