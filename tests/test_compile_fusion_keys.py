"""``fuser.runtime.compile_fusion``: which scalar inputs are part of a compiled segment's key
(and reach its lowering). A scalar that sets an extent must be: without its value the
lowering cannot bind the extent (nvFuser's iota of a runtime length on the GPU raised
'extent 0 depends on an unknown scalar')."""

from __future__ import annotations

from fuser import DataType, FusionDefinition
from fuser.schedulers.analysis.sizes import has_size_operands


def _fusion(build) -> object:  # noqa: ANN001
    with FusionDefinition() as fd:
        build(fd)
    return fd._ensure_defined().fusion


def test_an_iota_length_is_a_size_operand() -> None:
    def build(fd: FusionDefinition) -> None:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n, dtype=DataType.Float))

    assert has_size_operands(_fusion(build))


def test_full_of_a_runtime_shapehas_size_operands() -> None:
    def build(fd: FusionDefinition) -> None:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.full([n, 3], 1.0, dtype=DataType.Float))

    assert has_size_operands(_fusion(build))


def test_a_scalar_operand_of_arithmetic_is_not() -> None:
    def build(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        s = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.mul(t, s))

    assert not has_size_operands(_fusion(build))
