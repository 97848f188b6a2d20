"""The ``schedule-fusions`` pass: every schedule kind verifies, its reference loop nest
visits each element exactly once, and the reference interpreter gives the same
results before and after."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects.fuser import FusionOp, TensorType
from fuser.ir.dialects.iterdomain import LoopOp, ParallelType, RfactorOp
from fuser.ir.reference import run_fusion
from fuser.ir.schedule import LoopStructure, loop_structure
from fuser.passes.bind_sizes import BindSizes
from fuser.passes.schedule_fusions import ScheduleFusions, ScheduleFusionsError
from fuser.passes.select_schedulers import SelectSchedulers
from fuser.passes.sizes_option import SizesOptionError
from fuser.runtime.cpu_runner import run_segment_on_cpu
from tests.test_strip_bookend_views import TRANSPOSE

SOFTMAX = """
fuser.fusion @softmax(%x : !fuser.tensor<6x96xf32>) -> !fuser.tensor<6x96xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<6x96xf32>) -> !fuser.tensor<6xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<6xf32>) -> !fuser.tensor<6x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<6x96xf32>, !fuser.tensor<6x1xf32>) -> !fuser.tensor<6x96xf32>
  %e = fuser.exp %d : (!fuser.tensor<6x96xf32>) -> !fuser.tensor<6x96xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<6x96xf32>) -> !fuser.tensor<6xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<6xf32>) -> !fuser.tensor<6x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<6x96xf32>, !fuser.tensor<6x1xf32>) -> !fuser.tensor<6x96xf32>
  fuser.output %y : !fuser.tensor<6x96xf32>
}
"""

CASES: dict[str, tuple[str, str]] = {
    "pointwise_flat": (
        "pointwise",
        """
fuser.fusion @f(%a : !fuser.tensor<6x40xf32>, %b : !fuser.tensor<6x40xf32>) -> !fuser.tensor<6x40xf32> {
  %t = fuser.mul %a, %b : (!fuser.tensor<6x40xf32>, !fuser.tensor<6x40xf32>) -> !fuser.tensor<6x40xf32>
  %y = fuser.exp %t : (!fuser.tensor<6x40xf32>) -> !fuser.tensor<6x40xf32>
  fuser.output %y : !fuser.tensor<6x40xf32>
}""",
    ),
    "pointwise_2d": (
        "pointwise",
        """
fuser.fusion @f(%x : !fuser.tensor<10x24xf32>, %w : !fuser.tensor<24xf32>) -> !fuser.tensor<10x24xf32> {
  %wb = fuser.broadcast %w {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<24xf32>) -> !fuser.tensor<1x24xf32>
  %y = fuser.mul %x, %wb : (!fuser.tensor<10x24xf32>, !fuser.tensor<1x24xf32>) -> !fuser.tensor<10x24xf32>
  fuser.output %y : !fuser.tensor<10x24xf32>
}""",
    ),
    "inner_reduction": (
        "reduction",
        """
fuser.fusion @f(%x : !fuser.tensor<3x200xf32>) -> !fuser.tensor<3xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<3x200xf32>) -> !fuser.tensor<3xf32>
  fuser.output %s : !fuser.tensor<3xf32>
}""",
    ),
    "outer_reduction": (
        "reduction",
        """
fuser.fusion @f(%x : !fuser.tensor<50x12xf32>) -> !fuser.tensor<12xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<50x12xf32>) -> !fuser.tensor<12xf32>
  fuser.output %s : !fuser.tensor<12xf32>
}""",
    ),
    "inner_persistent": ("inner_persistent", SOFTMAX),
    "outer_persistent": (
        "outer_persistent",
        """
fuser.fusion @f(%x : !fuser.tensor<40x16xf32>) -> !fuser.tensor<40x16xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<40x16xf32>) -> !fuser.tensor<16xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<16xf32>) -> !fuser.tensor<1x16xf32>
  %y = fuser.sub %x, %sb : (!fuser.tensor<40x16xf32>, !fuser.tensor<1x16xf32>) -> !fuser.tensor<40x16xf32>
  fuser.output %y : !fuser.tensor<40x16xf32>
}""",
    ),
    "inner_outer_persistent": (
        "inner_outer_persistent",
        """
fuser.fusion @f(%x : !fuser.tensor<140x32xf32>) -> (!fuser.tensor<140x32xf32>, !fuser.tensor<32xf32>) {
  %r = fuser.sum %x {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<140x32xf32>) -> !fuser.tensor<140x1xf32>
  %y = fuser.mul %x, %r : (!fuser.tensor<140x32xf32>, !fuser.tensor<140x1xf32>) -> !fuser.tensor<140x32xf32>
  %c = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<140x32xf32>) -> !fuser.tensor<32xf32>
  fuser.output %y, %c : !fuser.tensor<140x32xf32>, !fuser.tensor<32xf32>
}""",
    ),
    "transpose": (
        "transpose",
        """
fuser.fusion @f(%a : !fuser.tensor<40x64xf32>, %b : !fuser.tensor<64x40xf32>) -> !fuser.tensor<64x40xf32> {
  %p = fuser.permute %a {dims = array<i64: 1, 0>} : (!fuser.tensor<40x64xf32>) -> !fuser.tensor<64x40xf32>
  %y = fuser.add %p, %b : (!fuser.tensor<64x40xf32>, !fuser.tensor<64x40xf32>) -> !fuser.tensor<64x40xf32>
  fuser.output %y : !fuser.tensor<64x40xf32>
}""",
    ),
    "pointwise_reshape": (
        "pointwise",
        """
fuser.fusion @f(%x : !fuser.tensor<6x40xf32>) -> !fuser.tensor<6x1x40xf32> {
  %e = fuser.exp %x : (!fuser.tensor<6x40xf32>) -> !fuser.tensor<6x40xf32>
  %v = fuser.reshape %e {new_shape = array<i64: 6, 1, 40>, view = #fuser.view<keep, broadcast, keep>} : !fuser.tensor<6x40xf32> -> !fuser.tensor<6x1x40xf32>
  %y = fuser.neg %v : (!fuser.tensor<6x1x40xf32>) -> !fuser.tensor<6x1x40xf32>
  fuser.output %y : !fuser.tensor<6x1x40xf32>
}""",
    ),
}


def schedule(text: str, sizes: str = "") -> tuple[ModuleOp, FusionOp, FusionOp]:
    """(module, fusion before scheduling, fusion after [bind-sizes +] select-schedulers
    + schedule-fusions)."""
    ctx: Context = make_context()
    module = parse_module(text)
    before = next(op for op in module.walk() if isinstance(op, FusionOp)).clone()
    if sizes:
        BindSizes(sizes).apply(ctx, module)
    SelectSchedulers().apply(ctx, module)
    ScheduleFusions().apply(ctx, module)
    module.verify()
    fusion = next(op for op in module.walk() if isinstance(op, FusionOp))
    return module, before, fusion


def covered(ls: LoopStructure, env_extra: dict[str, int] | None = None) -> list[tuple[int, ...]]:
    """Logical indices visited by the loop nest, out-of-bounds iterations masked off."""
    env_extra = env_extra or {}
    loop_ext = [a.extent.evaluate(env_extra) for a in ls.loops]
    extents = [a.extent.evaluate(env_extra) for a in ls.logical]
    hits = []
    for idx in itertools.product(*(range(e) for e in loop_ext)):
        env = ls.index_env(idx, env_extra)
        li = tuple(a.index.evaluate(env) for a in ls.logical)
        if all(0 <= x < e for x, e in zip(li, extents, strict=True)):
            hits.append(li)
    return hits


def loops_of(fusion: FusionOp) -> dict[SSAValue, LoopOp]:
    return {op.tensor: op for op in fusion.body.block.ops if isinstance(op, LoopOp)}


def random_inputs(fusion: FusionOp, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for a in fusion.inputs:
        t = a.type
        assert isinstance(t, TensorType)
        out.append(rng.standard_normal(t.get_shape()).astype(t.dtype.to_numpy()))
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_every_schedule_covers_its_reference_exactly_once(case: str) -> None:
    kind, text = CASES[case]
    _, _, fusion = schedule(text)
    assert f'kind = "{kind}"' in str(fusion.attributes["fuser.schedule"])
    loops = loops_of(fusion)
    assert loops, "no tensor was scheduled"
    for tensor, loop in loops.items():
        ls = loop_structure(fusion, tensor)
        hits = covered(ls)
        extents = [a.extent.evaluate({}) for a in ls.logical]
        assert sorted(hits) == list(itertools.product(*(range(e) for e in extents))), (
            f"{case}: {tensor.name_hint} is not covered exactly once"
        )
        ptypes = [a.parallel_type for a in ls.loops]
        assert ParallelType.BIDx in ptypes or ParallelType.TIDx in ptypes
        assert len(loop.ids) == len(ls.loops)


@pytest.mark.parametrize("case", list(CASES))
def test_schedule_does_not_change_results(case: str) -> None:
    _, text = CASES[case]
    _, before, after = schedule(text)
    for seed in range(2):
        inputs = random_inputs(before, seed)
        want = run_fusion(before, [x.copy() for x in inputs])
        got = run_fusion(after, [x.copy() for x in inputs])
        assert len(want) == len(got)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(w, g)


def test_pointwise_schedule_shape() -> None:
    _, _, fusion = schedule(CASES["pointwise_flat"][1])
    loops = loops_of(fusion)
    y = fusion.output_op.values[0]
    ls = loop_structure(fusion, y)
    assert [a.parallel_type for a in ls.loops] == [
        ParallelType.BIDx,
        ParallelType.TIDx,
        ParallelType.vectorize,
    ]
    assert [a.static_extent for a in ls.loops] == [1, 128, 4]
    # Inputs and the intermediate share the loop structure; only global tensors vectorize.
    names = {t.name_hint: [v.type.parallel_type for v in op.ids] for t, op in loops.items()}
    assert set(names) == {"a", "b", "t", "y"}
    assert names["t"][-1] == ParallelType.serial
    assert names["a"][-1] == ParallelType.vectorize


def test_2d_pointwise_gives_broadcast_input_broadcast_ids() -> None:
    _, _, fusion = schedule(CASES["pointwise_2d"][1])
    loops = {t.name_hint: op for t, op in loops_of(fusion).items()}
    assert set(loops) == {"x", "y", "wb"}  # %w (rank 1) is indexed through %wb
    wb = [v.type for v in loops["wb"].ids]
    assert wb[0].iter_type.value == "broadcast" and wb[0].parallel_type == ParallelType.BIDy
    assert [v.type.parallel_type for v in loops["y"].ids][:2] == [
        ParallelType.BIDy,
        ParallelType.BIDx,
    ]


CAST_GELU = """
fuser.fusion @gelu(%x : !fuser.tensor<64x256xbf16>) -> !fuser.tensor<64x256xbf16> {
  %xf = fuser.cast %x {dtype = f32} : (!fuser.tensor<64x256xbf16>) -> !fuser.tensor<64x256xf32>
  %t = fuser.tanh %xf : (!fuser.tensor<64x256xf32>) -> !fuser.tensor<64x256xf32>
  %y = fuser.cast %t {dtype = bf16} : (!fuser.tensor<64x256xf32>) -> !fuser.tensor<64x256xbf16>
  fuser.output %y : !fuser.tensor<64x256xbf16>
}
"""


def test_casts_join_the_domain_map() -> None:
    """A cast maps its input's axes to its output's (the domain map used to keep them
    apart, so a bf16 fusion cast to f32 and back had no pointwise reference): every
    tensor takes the output's schedule, the bf16 input and output vectorized."""
    _, _, fusion = schedule(CAST_GELU)
    loops = {t.name_hint: op for t, op in loops_of(fusion).items()}
    assert set(loops) == {"x", "xf", "t", "y"}
    assert loops["x"].ids[-1].type.parallel_type == ParallelType.vectorize  # type: ignore[attr-defined]
    assert loops["xf"].ids[-1].type.parallel_type == ParallelType.serial  # type: ignore[attr-defined]


def test_inner_persistent_places_reductions_and_the_persistent_input() -> None:
    """Inner persistent softmax: both reductions computed at the rows' loops, %x (read
    by both reductions and the output) held there in registers, and %e (``exp(x -
    max)``, a 96-wide row: under ``AVOID_RECOMPUTE_MAX_BYTES``) held there instead of
    recomputed after the sum; the rest inlined."""
    _, _, fusion = schedule(SOFTMAX)
    placed = {op.tensor.name_hint: (op.compute_at, str(op.memory)) for op in loops_of(fusion).values() if op.compute_at is not None}
    q = placed["m"][0]
    assert placed == {"m": (q, "registers"), "s": (q, "registers"), "x": (q, "registers"), "e": (q, "registers")}
    assert "memory" not in loops_of(fusion)[next(v for v in loops_of(fusion) if v.name_hint == "m")].properties


def test_inner_persistent_binds_reduction_axis_to_tidx() -> None:
    _, _, fusion = schedule(SOFTMAX)
    loops = {t.name_hint: op for t, op in loops_of(fusion).items()}
    assert {"m", "s", "x", "y", "e", "d", "mb", "sb"} <= set(loops)
    m = [v.type for v in loops["m"].ids]
    tidx = [t for t in m if t.parallel_type == ParallelType.TIDx]
    assert len(tidx) == 1 and tidx[0].iter_type.value == "reduction"
    assert m[0].parallel_type == ParallelType.BIDx


def test_reshape_is_scheduled_through_its_view() -> None:
    _, _, fusion = schedule(CASES["pointwise_reshape"][1])
    (rf,) = [op for op in fusion.body.block.ops if isinstance(op, RfactorOp)]
    assert rf.tensor.name_hint == "v"
    assert [v.type.extent for v in rf.ids] == [6, 1, 40]
    # The reshape result is scheduled from its rfactor ids: its loops index its root.
    v = rf.tensor
    # The producers of the reshape get its transforms replayed first (issue 10 item 4:
    # they had no loop domain), and their loops visit each element once.
    assert {t.name_hint for t in loops_of(fusion)} == {"v", "y", "e", "x"}
    ls = loop_structure(fusion, v)
    assert len(ls.root) == 2
    hits = covered(ls)
    assert sorted(hits) == list(itertools.product(range(6), range(1), range(40)))
    x = fusion.inputs[0]
    assert sorted(covered(loop_structure(fusion, x))) == list(
        itertools.product(range(6), range(40))
    )


def test_schedules_are_written_at_the_bound_sizes() -> None:
    """select-schedulers and schedule-fusions read the extents bind-sizes wrote; a
    symbolic fusion is refused with a pointer to bind-sizes."""
    text = """
fuser.fusion @row_sum(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}"""
    _, _, fusion = schedule(text, sizes="0=5x64")
    s = fusion.output_op.values[0]
    ls = loop_structure(fusion, s)
    assert all(a.static_extent is not None for a in ls.loops)  # every extent bound
    hits = covered(ls)
    assert sorted(hits) == list(itertools.product(range(5), range(64)))
    with pytest.raises(SizesOptionError, match=r"bind them first with bind-sizes\{sizes=\"0=\.\.\.\"\}"):
        SelectSchedulers().apply(make_context(), parse_module(text))


@pytest.mark.parametrize(
    ("attr", "message"),
    [
        ("", "has no fuser.schedule attribute"),
        ('{fuser.schedule = {kind = "fancy"}}', "kind must be one of"),
        ('{fuser.schedule = {kind = "pointwise", unroll = 1 : i64}}', "bad pointwise parameters"),
        ('{fuser.schedule = "pointwise"}', "must be a dictionary"),
        (
            '{fuser.schedule = {kind = "pointwise", break_point = 0 : i64, vectorization = 3 : i64, '
            "unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 1, 1, 1>}}",
            "vectorization = 3 does not divide the innermost extent 8",
        ),
    ],
)
def test_bad_schedule_attributes(attr: str, message: str) -> None:
    text = (
        "fuser.fusion @f(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> "
        + (f"attributes {attr} " if attr else "")
        + """{
  %y = fuser.exp %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %y : !fuser.tensor<4x8xf32>
}"""
    )
    # Parsed without verifying: the verifier rejects the malformed schedules itself
    # (tests/filecheck/fuser/invalid_schedule.mlir); the pass must still not crash.
    from xdsl.parser import Parser

    module = Parser(make_context(), text).parse_module()
    before = str(module)
    with pytest.raises(ScheduleFusionsError, match=message):
        ScheduleFusions().apply(make_context(), module)
    assert str(module) == before


def test_no_op_fusion_gets_the_loop_nest_that_materializes_it() -> None:
    """A no-op fusion is host work (a view); its schedule is the pointwise kernel that
    materializes it when the host cannot return a view. An alias-only one gets none."""
    text = """
fuser.fusion @views(%x : !fuser.tensor<8x6xf32>) -> !fuser.tensor<6x8xf32> {
  %p = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<8x6xf32>) -> !fuser.tensor<6x8xf32>
  fuser.output %p : !fuser.tensor<6x8xf32>
}"""
    _, _, fusion = schedule(text)
    assert 'kind = "no_op"' in str(fusion)
    loops = loops_of(fusion)
    assert loops
    # 48 elements, 4-wide vectors would need the innermost 8 and 6 to divide: 2 does.
    (out,) = [op for op in fusion.body.block.ops if isinstance(op, LoopOp) and op.tensor.name_hint == "p"]
    assert [str(v.type.parallel_type) for v in out.ids] == ["BIDx", "TIDx", "vectorize"]
    assert out.ids[-1].type.extent == 2
    x = np.random.default_rng(0).standard_normal((8, 6)).astype(np.float32)
    (got,), _ = run_segment_on_cpu(fusion, [x])
    np.testing.assert_array_equal(got, x.T)
    alias = """
fuser.fusion @alias(%x : !fuser.tensor<8x6xf32>) -> !fuser.tensor<8x6xf32> {
  fuser.output %x : !fuser.tensor<8x6xf32>
}"""
    _, _, fusion = schedule(alias)
    assert not loops_of(fusion)


def test_scheduled_fusion_ir_for_a_frontend_definition() -> None:
    from fuser.frontend import DataType, FusionDefinition
    from fuser.frontend.scheduled_ir import scheduled_fusion_ir_for

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.exp(t0)
        t2 = fd.ops.sum(t1, dims=[1], keepdim=False, dtype=DataType.Float)
        fd.add_output(t2)
    x = np.ones((8, 256), np.float32)
    text = scheduled_fusion_ir_for(fd, [x])
    assert 'kind = "reduction"' in text
    assert "iterdomain.loop" in text and "to TIDx" in text and "to BIDx" in text
    module = parse_module(text)  # the text round-trips and verifies
    module.verify()
    # The cached definition itself is not scheduled.
    assert "iterdomain" not in fd.fusion_ir()
    np.testing.assert_allclose(fd.execute([x])[0], np.full(8, 256 * np.e), rtol=1e-5)


def test_scheduled_fusion_ir_shows_the_segments_as_the_driver_left_them() -> None:
    """The driver's pipeline writes every kind's loop nest, the outer persistent
    kind's two included (statistics, apply); with a pipeline without schedule-fusions
    every loop nest is written here."""
    from fuser.frontend import DataType, FusionDefinition
    from fuser.frontend.scheduled_ir import scheduled_fusion_ir_for
    from fuser.runtime.driver import PASSES

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        mean = fd.ops.broadcast_in_dim(fd.ops.sum(x, dims=[0]), shape=[256, 1024], broadcast_dims=[1])
        fd.add_output(fd.ops.sub(x, mean))
    x = np.random.default_rng(0).standard_normal((256, 1024)).astype(np.float32)
    text = scheduled_fusion_ir_for(fd, [x])
    assert 'kind = "outer_persistent"' in text
    loops = [line for line in text.splitlines() if "iterdomain.loop" in line]
    assert any("reduction, BIDy" in line for line in loops)  # the statistics' nest
    assert any("!fuser.tensor<256x1024xf32> [!iterdomain.id<256, BIDy>" in line for line in loops)  # apply's
    without = [p for p in PASSES if not p.startswith("schedule-fusions")]
    fd.pipeline = without
    text = scheduled_fusion_ir_for(fd, [x])
    assert 'kind = "outer_persistent"' in text and "iterdomain.loop" in text
    parse_module(text).verify()


# Issue 10 item 4: pointwise fusions whose reshapes stay in the fusion (seed 002's
# GELU and transpose without strip-bookend-views, the A/B/C table, seed 003's
# split), scaled down so that every loop nest can be enumerated (and with extents the
# splits divide: a merge after a non-divisible split needs that split's own predicate,
# which ``covered`` does not model).
RESHAPE_POINTWISE = {
    "gelu": """
fuser.fusion @gelu(%t0 : !fuser.tensor<96x48xf32>) -> !fuser.tensor<96x48xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 4, 24, 48>} : !fuser.tensor<96x48xf32> -> !fuser.tensor<4x24x48xf32>
  %s = fuser.constant 5.000000e-01 : f64
  %t3 = fuser.mul %t1, %s : (!fuser.tensor<4x24x48xf32>, f64) -> !fuser.tensor<4x24x48xf32>
  %t6 = fuser.erf %t3 : (!fuser.tensor<4x24x48xf32>) -> !fuser.tensor<4x24x48xf32>
  %t9 = fuser.mul %t1, %t6 : (!fuser.tensor<4x24x48xf32>, !fuser.tensor<4x24x48xf32>) -> !fuser.tensor<4x24x48xf32>
  %t10 = fuser.reshape %t9 {new_shape = array<i64: 96, 48>} : !fuser.tensor<4x24x48xf32> -> !fuser.tensor<96x48xf32>
  fuser.output %t10 : !fuser.tensor<96x48xf32>
}""",
    "transpose": TRANSPOSE,
    "abc": """
fuser.fusion @abc_ABC(%t0 : !fuser.tensor<64x128xf32>) -> !fuser.tensor<4x16x128xf32> {
  %A = fuser.reshape %t0 {new_shape = array<i64: 4, 16, 128>} : !fuser.tensor<64x128xf32> -> !fuser.tensor<4x16x128xf32>
  %add = fuser.add %A, %A : (!fuser.tensor<4x16x128xf32>, !fuser.tensor<4x16x128xf32>) -> !fuser.tensor<4x16x128xf32>
  %B = fuser.reshape %add {new_shape = array<i64: 64, 128>} : !fuser.tensor<4x16x128xf32> -> !fuser.tensor<64x128xf32>
  %mul = fuser.mul %B, %B : (!fuser.tensor<64x128xf32>, !fuser.tensor<64x128xf32>) -> !fuser.tensor<64x128xf32>
  %C = fuser.reshape %mul {new_shape = array<i64: 4, 16, 128>} : !fuser.tensor<64x128xf32> -> !fuser.tensor<4x16x128xf32>
  fuser.output %C : !fuser.tensor<4x16x128xf32>
}""",
    "seed003_split": """
fuser.fusion @split40(%x : !fuser.tensor<2x10x40xf32>, %y : !fuser.tensor<2x10x2x20xf32>) -> !fuser.tensor<2x10x2x20xf32> {
  %r = fuser.reshape %x {new_shape = array<i64: 2, 10, 2, 20>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<2x10x2x20xf32>
  %a = fuser.add %r, %y : (!fuser.tensor<2x10x2x20xf32>, !fuser.tensor<2x10x2x20xf32>) -> !fuser.tensor<2x10x2x20xf32>
  fuser.output %a : !fuser.tensor<2x10x2x20xf32>
}""",
}


@pytest.mark.parametrize("case", sorted(RESHAPE_POINTWISE))
def test_pointwise_with_reshapes_schedules_every_tensor_once(case: str) -> None:
    """Before: 'no output covers every input axis'. Now the reference is an output
    whose loop nest covers the inputs through the reshapes' transforms, every tensor
    gets a loop domain, and each loop nest visits each element of its tensor once."""
    _, _, fusion = schedule(RESHAPE_POINTWISE[case])
    assert fusion.attributes["fuser.schedule"].data["kind"].data == "pointwise"  # type: ignore[attr-defined]
    loops = loops_of(fusion)
    tensors = [a for a in fusion.inputs] + [
        r for op in fusion.body.block.ops for r in op.results if isinstance(r.type, TensorType)
    ]
    assert set(tensors) <= set(loops), [t.name_hint for t in tensors if t not in loops]
    for t in tensors:
        want = list(itertools.product(*(range(e) for e in t.type.get_shape())))
        assert sorted(covered(loop_structure(fusion, t))) == want, t.name_hint


_NEG = """
fuser.fusion @f(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %y = fuser.neg %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %y : !fuser.tensor<4x8xf32>
}
"""


@pytest.mark.parametrize(
    "bad",
    [
        '{kind = "pointwise", break_point = 0 : i64, vectorization = 0 : i64, unroll = 1 : i64, '
        "block = array<i64: 128, 1, 1>, grid = array<i64: 1, 1, 1>}",
        '{kind = "pointwise", vectorization = 4 : i64}',
        '{kind = "TIDx"}',
        '"pointwise"',
    ],
)
def test_one_reader_of_fuser_schedule(bad: str) -> None:
    """The verifier, schedule-fusions and lower-to-kernels read ``fuser.schedule`` with
    ``schedulers.params.read_schedule``: the same attribute gets the same diagnostic
    from each (they used to disagree: lower-to-kernels ignored a non-dictionary, and
    each phrased a missing field its own way)."""
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import DiagnosticException

    from fuser.passes.lower_to_kernels import LowerToKernelsPass
    from fuser.schedulers.params import schedule_problem

    ctx = make_context()
    attr = Parser(ctx, bad).parse_attribute()
    problem = schedule_problem(attr)
    assert problem is not None
    said = []
    for p in (ScheduleFusions(), LowerToKernelsPass()):
        module = parse_module(_NEG)
        fusion = next(op for op in module.walk() if isinstance(op, FusionOp))
        fusion.attributes["fuser.schedule"] = attr  # unverified, as a pass may meet it
        with pytest.raises(DiagnosticException) as e:
            p.apply(ctx, module)
        said.append(str(e.value))
    assert said == [f"{name}: @f: fuser.schedule: {problem}" for name in ("schedule-fusions", "lower-to-kernels")]
