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


def test_a_segment_differing_only_in_its_name_reuses_the_lowering(monkeypatch) -> None:  # noqa: ANN001
    """``FusionCompiler._lower``: a transformer's layers give segments whose IR is the
    same but for the name; the second is not lowered again, and its kernels and CUDA
    carry its own name. Other sizes, or other IR, lower again."""
    from xdsl.dialects.builtin import StringAttr

    import fuser.runtime.compile_fusion as cf
    from fuser.codegen.lower.common import TensorLayout
    from fuser.runtime.compile_fusion import FusionCompiler
    from fuser.runtime.schedule_segment import schedule_segment
    from fuser.runtime.signature import Signature
    from fuser.schedulers.target import H100

    def build(fd: FusionDefinition) -> None:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.sum(t, [1], keepdim=True)
        fd.add_output(fd.ops.sub(t, s))

    shape = (64, 256)
    seg = schedule_segment(_fusion(build), Signature((shape,)), H100)
    seg.sym_name = StringAttr("layer0_seg3")
    twin = seg.clone()
    twin.sym_name = StringAttr("layer7_seg3")
    calls: list[str] = []
    lower = cf.lower_segment
    monkeypatch.setattr(cf, "lower_segment", lambda f, *a: calls.append(f.sym_name.data) or lower(f, *a))
    comp = FusionCompiler(H100)
    lay = [TensorLayout.contiguous(shape, 4)]
    first, src0 = comp._lower(seg, lay, [None], None)  # noqa: SLF001
    second, src1 = comp._lower(twin, lay, [None], None)  # noqa: SLF001
    assert calls == ["layer0_seg3"]
    assert "layer0" in src0 and "layer0" not in src1 and src1 == src0.replace("layer0_seg3", "layer7_seg3")
    assert [k.name for k in second.kernels] == [k.name.replace("layer0", "layer7") for k in first.kernels]
    assert all(k.name.startswith("layer7_seg3") for k in second.kernels)
    assert [(k.grid, k.block, k.args) for k in second.kernels] == [(k.grid, k.block, k.args) for k in first.kernels]
    wide = schedule_segment(_fusion(build), Signature(((64, 512),)), H100)  # other sizes: other IR
    wide.sym_name = StringAttr("layer7_seg3")
    comp._lower(wide, [TensorLayout.contiguous((64, 512), 4)], [None], None)  # noqa: SLF001
    assert calls == ["layer0_seg3", "layer7_seg3"]
