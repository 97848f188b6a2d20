"""Kernel builder simplifications: the merge of a split index is the split index
(``kernel_builders.recombined``), a bf16 value computed in f32 is stored as itself
(``KernelBuilder.to_storage``), and the pure ops a kernel never reads are erased
(``codegen/dead_ops.py``).

GPT-2's loss backward writes ``[8, 512, 50257]`` from ``[4096, 50257]`` inputs: the
loop nest splits its flat index into the output's three axes, and the reshape back to
the inputs' two merged them again, so each element paid for four divisions by
constants that cancel. Here a smaller such fusion: its kernels equal the reference
(CPU kernel interpreter, NVRTC), its CUDA divides the flat index once by the row
width and never by the split extent, rounds each stored value to bf16 once, and
computes nothing it leaves unread."""

from __future__ import annotations

import re

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.kernel_builders import recombined
from fuser.ir.dialects import fuser as F
from tests.kernel_check import assert_close, kernels_and_reference


def _fusion() -> F.FusionOp:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        m = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        y = fd.ops.exp(fd.ops.sub(fd.ops.cast(x, DataType.Float), m))
        fd.add_output(fd.ops.cast(fd.ops.reshape(y, [4, 64, 301]), DataType.BFloat16))
    return fd.fusion()


def test_reshaped_output_divides_its_index_once() -> None:
    rng = np.random.default_rng(0)
    import ml_dtypes

    inputs = [rng.uniform(-2, 2, (256, 301)).astype(ml_dtypes.bfloat16),
              rng.uniform(-1, 1, (256, 1)).astype(np.float32)]
    ours, ref, lowered = kernels_and_reference(_fusion(), inputs, "pointwise")
    assert_close(ours, ref, rtol=1e-2, atol=1e-2)
    src = print_cuda(lowered.kernels[0].module)
    body = src[src.index("__global__"):]
    assert not re.search(r"[/%] 64\b", body), "the split of 4 x 64 rows is merged back, not divided"
    assert len(re.findall(r"/ 301\b", body)) <= 1 * body.count("for (") + 1
    assert body.count("__float2bfloat16_rn(") == 1 and body.count("__bfloat162float(") == 1
    names = re.findall(r"\b(?:int|long long|float|__nv_bfloat16) (t\d+) =", body)
    unread = [n for n in names if len(re.findall(rf"\b{n}\b", body)) == 1]
    assert not unread, f"index values computed and never read: {unread}"


def _op(cls: type, *operands: object) -> object:
    return cls(*operands).result


def test_recombined_recognises_either_order_and_only_the_same_value() -> None:
    idx = IndexType()
    x = arith.ConstantOp(IntegerAttr(0, idx)).result  # stands for any index value
    x2 = arith.ConstantOp(IntegerAttr(0, idx)).result
    c = arith.ConstantOp(IntegerAttr(512, idx)).result
    c_again = arith.ConstantOp(IntegerAttr(512, idx)).result
    c_other = arith.ConstantOp(IntegerAttr(511, idx)).result
    q = _op(arith.DivSIOp, x, c)
    r = _op(arith.RemSIOp, x, c)
    assert recombined(_op(arith.MuliOp, q, c_again), r) is x
    assert recombined(r, _op(arith.MuliOp, c, q)) is x
    assert recombined(_op(arith.MuliOp, q, c_other), r) is None
    assert recombined(_op(arith.MuliOp, _op(arith.DivSIOp, x2, c), c), r) is None
    assert recombined(_op(arith.MuliOp, q, c), _op(arith.RemSIOp, x, c_other)) is None
