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
    lower = cf.lower_for_launch
    monkeypatch.setattr(cf, "lower_for_launch", lambda f, *a, **k: calls.append(f.sym_name.data) or lower(f, *a, **k))
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


def test_the_launches_compiled_ahead_are_predicted_at_the_runs_layouts() -> None:
    """``gpu_program._predicted_launch`` (what ``GpuProgram.compile_ahead`` compiles
    before a first run): a program input keeps its own layout and alignment; the
    intermediate between the two segments and the returned output are dense and
    16-byte aligned, as ``launch_fusion`` reads them from fresh buffers (4 floats, 8
    bf16); no scalar sets an extent here. The GPU test
    ``test_the_first_run_compiles_every_segment_ahead`` checks the run asks for these."""
    from fuser.codegen.lower.common import TensorLayout
    from fuser.runtime.driver import compile as compile_program
    from fuser.runtime.gpu_program import _predicted_launch
    from fuser.runtime.signature import Signature
    from fuser.schedulers.target import H100

    for dtype, align in ((DataType.Float, 4), (DataType.BFloat16, 8)):
        def build(fd: FusionDefinition, dtype=dtype) -> None:  # noqa: ANN001
            t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
            t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
            s = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Float)
            cut = fd.ops.segment_set(fd.ops.broadcast(s, is_broadcast_dim=[False, True]))
            fd.add_output(fd.ops.add(t1, cut))

        shape = (1000, 3000)
        exe = compile_program(_fusion(build), Signature((shape, shape)), H100)
        given = [TensorLayout.contiguous(shape, 2), TensorLayout.contiguous(shape, align)]  # x is 2-element aligned
        jobs = [_predicted_launch(*launch) for launch in exe.launch_layouts(given, [None, None])]
        assert len(jobs) == 2
        (red, red_in, red_vals, red_out, red_alias), (add, add_in, add_vals, add_out, add_alias) = jobs
        assert red_alias == () and add_alias == ()  # nothing is written in place
        assert red_in == [given[0]] and red_vals == [None]
        middle = TensorLayout.contiguous((1000, 1), 4)  # the broadcast sum: a float32 buffer the program allocates
        assert red_out == [middle]
        assert sorted(add_in, key=repr) == sorted([given[1], middle], key=repr)
        assert add_out == [TensorLayout.contiguous(shape, 4)]  # the sum made float32 outputs
