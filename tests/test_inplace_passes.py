"""Differential test of every pass on fusions with in-place outputs (``alias_inputs``).

Each fusion below writes at least one output in place into one of its inputs; some
inputs are sliced, reshaped or permuted at the boundary, so ``strip-bookend-views``
moves them and renumbers the fusion's inputs. Every pass alone and every prefix of
the pipeline (``canonicalize``, ``strip-bookend-views``, ``mark-aliases``,
``segment``, ``lower-stream-loops``) must leave the module computing the same
outputs AND the same final contents of every input buffer as the reference
interpreter on the original fusion (random inputs, several seeds).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.reference import run_fusion
from fuser.passes.canonicalize import CanonicalizePass
from fuser.passes.host_rewrites import HostPassError
from fuser.passes.lower_stream_loops import LowerStreamLoops
from fuser.passes.mark_aliases import MarkAliases
from fuser.passes.segment import SegmentPass
from fuser.passes.strip_bookend_views import StripBookendViews
from fuser.runtime.host_evaluator import run_program

_SLICE5 = "{starts = array<i64: 0>, ends = array<i64: 5>, strides = array<i64: 1>}"

FUSIONS: dict[str, str] = {
    # issue 10 item 1: %x is sliced at the boundary (moved to the host), %y is
    # updated in place; the new fusion inputs are (%y, %x[:5])
    "slice_before_target": f"""
fuser.fusion @f(%x : !fuser.tensor<10xf32>, %y : !fuser.tensor<5xf32>) -> !fuser.tensor<5xf32> {{
  %s = fuser.slice %x {_SLICE5} : (!fuser.tensor<10xf32>) -> !fuser.tensor<5xf32>
  %c = fuser.constant 1.000000e+00 : f64
  %u = fuser.add %y, %c : (!fuser.tensor<5xf32>, f64) -> !fuser.tensor<5xf32>
  %m = fuser.mul %s, %u : (!fuser.tensor<5xf32>, !fuser.tensor<5xf32>) -> !fuser.tensor<5xf32>
  fuser.output %m, %u : !fuser.tensor<5xf32>, !fuser.tensor<5xf32> {{alias_inputs = array<i64: -1, 1>}}
}}
""",
    # the same with nothing else returned and the in-place output alone
    "slice_only_inplace": f"""
fuser.fusion @f(%x : !fuser.tensor<10xf32>, %y : !fuser.tensor<5xf32>) {{
  %s = fuser.slice %x {_SLICE5} : (!fuser.tensor<10xf32>) -> !fuser.tensor<5xf32>
  %u = fuser.add %y, %s : (!fuser.tensor<5xf32>, !fuser.tensor<5xf32>) -> !fuser.tensor<5xf32>
  fuser.output %u : !fuser.tensor<5xf32> {{alias_inputs = array<i64: 1>}}
}}
""",
    # reshaped and permuted inputs around two in-place targets
    "reshape_permute_two_targets": """
fuser.fusion @f(%a : !fuser.tensor<4x6xf32>, %y : !fuser.tensor<24xf32>, %b : !fuser.tensor<6x4xf32>, %z : !fuser.tensor<4x6xf32>) -> !fuser.tensor<24xf32> {
  %r = fuser.reshape %a {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
  %u = fuser.sub %y, %r : (!fuser.tensor<24xf32>, !fuser.tensor<24xf32>) -> !fuser.tensor<24xf32>
  %p = fuser.permute %b {dims = array<i64: 1, 0>} : (!fuser.tensor<6x4xf32>) -> !fuser.tensor<4x6xf32>
  %w = fuser.mul %z, %p : (!fuser.tensor<4x6xf32>, !fuser.tensor<4x6xf32>) -> !fuser.tensor<4x6xf32>
  %e = fuser.exp %u : (!fuser.tensor<24xf32>) -> !fuser.tensor<24xf32>
  fuser.output %w, %e, %u : !fuser.tensor<4x6xf32>, !fuser.tensor<24xf32>, !fuser.tensor<24xf32> {alias_inputs = array<i64: 3, -1, 1>}
}
""",
    # the in-place target is itself read only through an input-end reshape: it must
    # stay a fusion input (the write's destination) after the reshape moves out
    "target_read_through_view": """
fuser.fusion @f(%x : !fuser.tensor<3x8xf32>, %y : !fuser.tensor<2x12xf32>) -> !fuser.tensor<24xf32> {
  %r = fuser.reshape %y {new_shape = array<i64: 24>} : !fuser.tensor<2x12xf32> -> !fuser.tensor<24xf32>
  %rx = fuser.reshape %x {new_shape = array<i64: 24>} : !fuser.tensor<3x8xf32> -> !fuser.tensor<24xf32>
  %s = fuser.add %r, %rx : (!fuser.tensor<24xf32>, !fuser.tensor<24xf32>) -> !fuser.tensor<24xf32>
  %u = fuser.reshape %s {new_shape = array<i64: 2, 12>} : !fuser.tensor<24xf32> -> !fuser.tensor<2x12xf32>
  %n = fuser.neg %s : (!fuser.tensor<24xf32>) -> !fuser.tensor<24xf32>
  fuser.output %n, %u : !fuser.tensor<24xf32>, !fuser.tensor<2x12xf32> {alias_inputs = array<i64: -1, 1>}
}
""",
    # mark-aliases: a returned view of an input, a racy in-place update (read
    # through a broadcast), an identity cast for canonicalize to fold
    "racy_with_view_output": """
fuser.fusion @f(%x : !fuser.tensor<8xf32>, %y : !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>) {
  %b = fuser.broadcast %x {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<8xf32>) -> !fuser.tensor<1x8xf32>
  %s = fuser.add %y, %b : (!fuser.tensor<4x8xf32>, !fuser.tensor<1x8xf32>) -> !fuser.tensor<4x8xf32>
  %c = fuser.constant 1.000000e+00 : f64
  %n = fuser.add %x, %c : (!fuser.tensor<8xf32>, f64) -> !fuser.tensor<8xf32>
  %k = fuser.cast %n : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  %r = fuser.reshape %y {new_shape = array<i64: 2, 16>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<2x16xf32>
  %q = fuser.slice %r {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (!fuser.tensor<2x16xf32>) -> !fuser.tensor<2x4xf32>
  fuser.output %s, %q, %k : !fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>, !fuser.tensor<8xf32> {alias_inputs = array<i64: -1, -1, 0>}
}
""",
    # segment: a reduction and an in-place update of the reduced input; the
    # update must not land before the reduction reads the input
    "reduction_then_inplace": """
fuser.fusion @f(%w : !fuser.tensor<16x32xf32>, %g : !fuser.tensor<16x32xf32>) -> !fuser.tensor<16xf32> {
  %s = fuser.sum %w {dims = array<i64: 1>} : (!fuser.tensor<16x32xf32>) -> !fuser.tensor<16xf32>
  %c = fuser.constant 1.000000e-01 : f64
  %d = fuser.mul %g, %c : (!fuser.tensor<16x32xf32>, f64) -> !fuser.tensor<16x32xf32>
  %n = fuser.sub %w, %d : (!fuser.tensor<16x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x32xf32>
  fuser.output %n, %s : !fuser.tensor<16x32xf32>, !fuser.tensor<16xf32> {alias_inputs = array<i64: 0, -1>}
}
""",
    # segment: an in-place update that needs the reduction of its own target
    # (seed 000 shape), with a sliced input in front of the target
    "normalize_in_place": """
fuser.fusion @f(%m : !fuser.tensor<16x40xf32>, %x : !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x32xf32> {
  %ms = fuser.slice %m {starts = array<i64: 0, 0>, ends = array<i64: 16, 32>, strides = array<i64: 1, 1>} : (!fuser.tensor<16x40xf32>) -> !fuser.tensor<16x32xf32>
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<16x32xf32>) -> !fuser.tensor<16xf32>
  %b = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<16xf32>) -> !fuser.tensor<16x1xf32>
  %t = fuser.sub %x, %b : (!fuser.tensor<16x32xf32>, !fuser.tensor<16x1xf32>) -> !fuser.tensor<16x32xf32>
  %o = fuser.mul %ms, %t : (!fuser.tensor<16x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x32xf32>
  fuser.output %o, %t : !fuser.tensor<16x32xf32>, !fuser.tensor<16x32xf32> {alias_inputs = array<i64: -1, 1>}
}
""",
    # segment: a user segment_set cuts the fusion; the in-place update of %y and
    # the other read of %y must stay ordered (here they share the second kernel)
    "segment_set_beside_inplace": """
fuser.fusion @f(%x : !fuser.tensor<16x32xf32>, %y : !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x32xf32> {
  %c = fuser.constant 1.000000e+00 : f64
  %u = fuser.add %y, %c : (!fuser.tensor<16x32xf32>, f64) -> !fuser.tensor<16x32xf32>
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<16x32xf32>) -> !fuser.tensor<32xf32>
  %b = fuser.broadcast %s {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<32xf32>) -> !fuser.tensor<1x32xf32>
  %bs = fuser.segment_set %b : (!fuser.tensor<1x32xf32>) -> !fuser.tensor<1x32xf32>
  %o = fuser.mul %y, %bs : (!fuser.tensor<16x32xf32>, !fuser.tensor<1x32xf32>) -> !fuser.tensor<16x32xf32>
  fuser.output %o, %u : !fuser.tensor<16x32xf32>, !fuser.tensor<16x32xf32> {alias_inputs = array<i64: -1, 1>}
}
""",
}

PIPELINE: tuple[tuple[str, ModulePass], ...] = (
    ("canonicalize", CanonicalizePass()),
    ("strip-bookend-views", StripBookendViews()),
    ("mark-aliases", MarkAliases()),
    ("segment", SegmentPass()),
)

# stream-parallel fusions (seed 001): lower-stream-loops instead of segment
STREAM_FUSIONS: dict[str, str] = {
    # %x is sliced at the boundary, %y updated in place by a stream-parallel add
    "stream_inplace": """
fuser.fusion @f(%x : !fuser.tensor<6x8xf32>, %y : !fuser.tensor<6x4xf32>) -> !fuser.tensor<6x4xf32> {
  %xs = fuser.slice %x {starts = array<i64: 0, 2>, ends = array<i64: 6, 6>, strides = array<i64: 1, 1>} : (!fuser.tensor<6x8xf32>) -> !fuser.tensor<6x4xf32>
  %t1 = fuser.add %xs, %y : (!fuser.tensor<6x4xf32>, !fuser.tensor<6x4xf32>) -> !fuser.tensor<6x4xf32>
  %t2 = fuser.exp %t1 : (!fuser.tensor<6x4xf32>) -> !fuser.tensor<6x4xf32>
  %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<6x4xf32> -> !iterdomain.id<6>, !iterdomain.id<4>
  %s0 = iterdomain.parallelize %i0 to stream : !iterdomain.id<6> -> !iterdomain.id<6, stream>
  iterdomain.loop %t1 [%s0, %i1] : !fuser.tensor<6x4xf32> [!iterdomain.id<6, stream>, !iterdomain.id<4>]
  fuser.output %t2, %t1 : !fuser.tensor<6x4xf32>, !fuser.tensor<6x4xf32> {alias_inputs = array<i64: -1, 1>}
}
""",
}

STREAM_PIPELINE: tuple[tuple[str, ModulePass], ...] = (
    ("canonicalize", CanonicalizePass()),
    ("strip-bookend-views", StripBookendViews()),
    ("mark-aliases", MarkAliases()),
    ("lower-stream-loops", LowerStreamLoops()),
)

SEEDS = (0, 1, 2)


def random_inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    fusion = next(op for op in module.ops if isinstance(op, F.FusionOp))
    rng = np.random.default_rng(seed)
    out = []
    for t in fusion.function_type.inputs.data:
        assert isinstance(t, F.TensorType)
        out.append(rng.standard_normal(t.get_shape()).astype(t.dtype.to_numpy()))
    return out


def run_any(module: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The module's ``hir.program`` through the host evaluator, or its one fusion
    through the reference (as ``fuser-run`` does)."""
    programs = [op for op in module.ops if isinstance(op, H.ProgramOp)]
    if programs:
        assert len(programs) == 1
        return list(run_program(module, inputs, programs[0].sym_name.data))
    (fusion,) = [op for op in module.ops if isinstance(op, F.FusionOp)]
    return list(run_fusion(fusion, inputs))


def check_same(text: str, passes: Sequence[ModulePass]) -> None:
    original = parse_module(text)
    module = parse_module(text)
    ctx: Context = make_context()
    for p in passes:
        p.apply(ctx, module)
    module.verify()
    for seed in SEEDS:
        inputs = random_inputs(original, seed)
        want_inputs = [x.copy() for x in inputs]
        want = run_any(original, want_inputs)
        got_inputs = [x.copy() for x in inputs]
        got = run_any(module, got_inputs)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"output #{i}")
        for i, (g, w) in enumerate(zip(got_inputs, want_inputs, strict=True)):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"input buffer #{i}")


@pytest.mark.parametrize("name", sorted(FUSIONS))
@pytest.mark.parametrize("pass_name", [n for n, _ in PIPELINE])
def test_each_pass_keeps_inplace_semantics(name: str, pass_name: str) -> None:
    check_same(FUSIONS[name], [p for n, p in PIPELINE if n == pass_name])


@pytest.mark.parametrize("name", sorted(FUSIONS))
@pytest.mark.parametrize("length", range(2, len(PIPELINE) + 1))
def test_each_pipeline_prefix_keeps_inplace_semantics(name: str, length: int) -> None:
    check_same(FUSIONS[name], [p for _, p in PIPELINE[:length]])


def test_strip_renumbers_the_inplace_target() -> None:
    """Item 1's reproducer in the IR: after the slice of %x moves out, %y is input #0
    and the in-place output points at it."""
    module = parse_module(FUSIONS["slice_before_target"])
    StripBookendViews().apply(make_context(), module)
    fusion = next(op for op in module.ops if isinstance(op, F.FusionOp))
    assert [a.name_hint for a in fusion.inputs] == ["y", "s"]
    assert fusion.output_op.get_alias_inputs() == [-1, 0]


@pytest.mark.parametrize("name", sorted(STREAM_FUSIONS))
@pytest.mark.parametrize("length", range(1, len(STREAM_PIPELINE) + 1))
def test_stream_pipeline_prefix_keeps_inplace_semantics(name: str, length: int) -> None:
    check_same(STREAM_FUSIONS[name], [p for _, p in STREAM_PIPELINE[:length]])


@pytest.mark.parametrize("name", sorted(STREAM_FUSIONS))
def test_stream_loops_after_mark_aliases(name: str) -> None:
    """mark-aliases preallocates the launch (``outs``): lower-stream-loops used to
    leave the returned buffer unwritten and deallocate the in-place target."""
    check_same(STREAM_FUSIONS[name], [MarkAliases(), LowerStreamLoops()])


def test_stream_loops_alone_reject_alias_inputs() -> None:
    """Without mark-aliases the fusion still has ``alias_inputs``: a diagnostic, not a
    silently dropped update."""
    module = parse_module(STREAM_FUSIONS["stream_inplace"])
    with pytest.raises(HostPassError, match="outputs aliasing its inputs"):
        LowerStreamLoops().apply(make_context(), module)


def test_aligned_inplace_update_with_stream_marks_needs_no_cut() -> None:
    """Stream marks (iterdomain ops) on the updated value are not reads of the
    target: mark-aliases adds no segment_set (a needless copy kernel before). The
    other output is computed from ``%x`` alone: ``stream_inplace``'s ``exp(%t1)``
    reads the update's own value, which a kernel would recompute from ``%y`` after
    storing into it, so that fusion is cut."""
    text = STREAM_FUSIONS["stream_inplace"].replace("%t2 = fuser.exp %t1", "%t2 = fuser.exp %xs")
    module = parse_module(text)
    MarkAliases().apply(make_context(), module)
    assert not [op for op in module.walk() if isinstance(op, F.SegmentSetOp)]
    module = parse_module(STREAM_FUSIONS["stream_inplace"])
    MarkAliases().apply(make_context(), module)
    assert len([op for op in module.walk() if isinstance(op, F.SegmentSetOp)]) == 1
