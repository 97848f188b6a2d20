"""``mark-aliases``: alias analysis of fusion outputs, as ``hir`` aliases and views.

Four rewrites, on every fusion launched by a ``hir.program`` (a module without one
gets one, as in ``strip-bookend-views``):

1. **The in-place race** (nvFuser guards against it): an output written in place
   into input ``X`` (``fuser.output {alias_inputs}``) while another part of the same
   kernel reads ``X`` at other positions (through a broadcast, an implicit
   broadcast of a binary op, a permute, a reduction...) races with the write. The
   pass inserts ``fuser.segment_set`` before the aliased output, which ``segment``
   honours: the update is computed into a temporary by one kernel and copied into
   ``X`` by a later one. Reads of ``X`` by elementwise ops of ``X``'s own shape are
   element-aligned with the write and need no cut. Another fusion input that a
   launch passes a view of ``X``'s buffer (``hir.permute %X`` beside ``%X``) is a
   read of ``X`` too: cut, unless it is ``%X``'s very value read element by element.
   So is an update from which another output is computed, unless the fusion is
   pointwise and that output has the update's shape and layout (its kernel stores
   them together, after all their loads; elsewhere it could load ``X`` after storing
   the update), and an update by a view of an input (``needs_cut``).
2. **Outputs that are views of inputs** (a fusion input seen through host-viewable
   views, under ``strip-bookend-views``' layout rules) leave the fusion and become
   host views of the launch argument: same storage, no kernel. A fusion left with
   no output launches nothing (the launch and the fusion symbol are erased). An
   output declared with a layout (``stride_order``) stays: a kernel writes it in
   that layout.
3. **In-place updates** become ``hir`` aliases: the aliased output becomes a
   launch result (after the others) and ``hir.alias %result, %X`` makes every
   write of it a write of the caller's buffer ``%X``.
4. **Preallocated outputs**: a launch whose output extents are all known on the
   host (static, or an input's extent read with ``fuser.size``) writes into
   buffers: ``hir.allocate`` for each result (``preallocated`` when the program
   returns it, so the caller may pass the buffer; the alias target itself for an
   in-place result, unless the launch also reads that buffer through another view
   or misaligned: then a buffer of its own, which the ``hir.alias`` copies into the
   target, ``read_elsewhere``) and ``hir.launch ... outs(...)``.

Before::

    fuser.fusion @f(%x : !fuser.tensor<8xf32>, %y : !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>) {
      %b = fuser.broadcast %x {is_broadcast_dim = array<i1: true, false>} : ...
      %s = fuser.add %y, %b : ...
      %c = fuser.constant 1.0 : f64
      %n = fuser.add %x, %c : ...
      %r = fuser.reshape %x {new_shape = array<i64: 2, 4>, ...} : ...
      fuser.output %s, %r, %n : ... {alias_inputs = array<i64: -1, -1, 0>}
    }

After (``%x`` is read through a broadcast in the kernel that updates it)::

    fuser.fusion @f(%x : ..., %y : ...) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>) {
      ...
      %n2 = fuser.segment_set %n : ...
      fuser.output %s, %n2 : ...
    }
    hir.program @main(%0 : !fuser.tensor<8xf32>, %1 : !fuser.tensor<4x8xf32>) -> (...) {
      %2 = hir.reshape %0 {new_shape = array<i64: 2, 4>} : ...
      %3 = hir.allocate {preallocated} : !fuser.tensor<4x8xf32>
      %4, %5 = hir.launch @f(%0, %1) outs(%3, %0 : ...) : ...
      hir.alias %5, %0 : ...
      hir.return %3, %2 : ...
    }

Restrictions: an output whose extents are computed (a symbolic reshape, ``cat``,
``pad``...) keeps a launch without ``outs`` (it allocates its own results).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.passes.host_rewrites import (
    InputExtent,
    ensure_programs,
    erase_dead_ops,
    erase_op,
    fusions_by_name,
    host_sizes,
    host_view_ops_typed,
    input_end_type,
    launches_by_callee,
    rebuild_launch,
    set_fusion_outputs,
    symbolic_extents,
)
from fuser.schedulers.analysis.graph import descendants, is_elementwise

__all__ = [
    "MarkAliases",
    "alias_target",
    "args_sharing",
    "buffer_of",
    "guard_inplace_races",
    "mark_aliases",
    "needs_cut",
    "preallocate_outputs",
    "reads_misaligned",
]


# ---- 1. the in-place race ---------------------------------------------------------


def reads_misaligned(x: BlockArgument) -> bool:
    """Whether the fusion reads ``x`` at positions other than the element it writes:
    some op reached from ``x`` is not an elementwise op of ``x``'s shape."""
    xt = x.type
    assert isinstance(xt, F.TensorType)
    aligned: list[SSAValue] = [x]
    seen: set[SSAValue] = set()
    while aligned:
        v = aligned.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            op = use.operation
            if isinstance(op, F.OutputOp) or op.name.startswith("iterdomain."):
                continue  # the terminator, schedule metadata (stream marks): no read
            ok = isinstance(op, F.ElementwiseOp | F.CastOp) and all(
                isinstance(r.type, F.TensorType) and r.type.get_shape() == xt.get_shape()
                for r in op.results
            )
            if not ok:
                return True
            aligned.extend(op.results)
    return False


def buffer_of(v: SSAValue) -> SSAValue:
    """The host value whose memory ``v`` is: host views followed to their input."""
    while isinstance(v.owner, H.HostViewOp):
        v = v.owner.view_input()
    return v


def args_sharing(launch: H.LaunchOp, v: SSAValue) -> list[int]:
    """The positions of ``launch``'s tensor arguments that are ``v``'s buffer or a
    host view of it (``buffer_of``)."""
    root = buffer_of(v)
    return [j for j, y in enumerate(launch.args) if isinstance(y.type, F.TensorType) and buffer_of(y) is root]


def _memory_sharers(launches: Sequence[H.LaunchOp], a: int) -> dict[int, bool]:
    """The other fusion inputs that some launch passes ``a``'s memory: input index ->
    whether every such launch passes the very value of argument ``a`` (the same
    view, element for element) rather than another view of its buffer."""
    out: dict[int, bool] = {}
    for launch in launches:
        x = launch.args[a]
        for j in args_sharing(launch, x):
            if j != a:
                out[j] = out.get(j, True) and launch.args[j] is x
    return out


def _pointwise(fusion_ops: Sequence[Operation]) -> bool:
    """Whether every tensor op of a fusion is elementwise or a broadcast: the fusion
    is one pointwise loop nest, whose outputs of one shape and layout are stored
    together, each element after all of its loads (``loop_nest.pointwise_kernel``)."""
    return all(
        is_elementwise(op)
        or isinstance(op, F.BroadcastOp | F.BroadcastInDimOp | F.ExpandOp | F.OutputOp)
        or op.name.startswith("iterdomain.")
        or not any(isinstance(r.type, F.TensorType) for r in op.results)
        for op in fusion_ops
    )


def _feeds_other_outputs(x: BlockArgument, v: SSAValue, term: F.OutputOp) -> bool:
    """Whether ``x`` reaches a fusion output other than ``v`` that the kernel storing
    ``v`` may compute after it stored ``v``: cut, so that the update is a copy
    written last (``segment`` orders it after every reader of ``x``).

    Not in a pointwise fusion whose other outputs computed from ``x`` have ``v``'s
    shape and layout: its kernel stores all of them in one group, after every load
    of the group (an optimizer step updating its moments in place and computing the
    parameter from them stays one kernel). ``codegen.aliased_args`` checks the
    order in the kernels it gets."""
    seen = descendants([x])
    others = [w for w in term.values if w in seen and w is not v]
    if not others:
        return False
    vt = v.type
    assert isinstance(vt, F.TensorType)
    layout = (vt.get_shape(), vt.get_stride_order())
    block = term.parent_block()
    assert block is not None
    return not _pointwise(list(block.ops)) or any(
        not isinstance(w.type, F.TensorType) or (w.type.get_shape(), w.type.get_stride_order()) != layout
        for w in others
    )


def needs_cut(fusion: F.FusionOp, launches: Sequence[H.LaunchOp], a: int, v: SSAValue) -> bool:
    """Whether the update ``v`` of input ``a`` (``X``) must be computed into a
    temporary and copied into ``X`` by a later kernel. It must when:

    * the kernel reads ``X`` at other positions than the element it writes;
    * ``launches`` pass another input that is a view of ``X``'s buffer
      (``hir.permute %X`` beside ``%X``: what ``strip-bookend-views`` makes of a
      permute of the input), unless it is ``X``'s very value read element by element;
    * another output is computed from ``X`` and may be stored apart from the
      update (``_feeds_other_outputs``);
    * ``v`` is a view of an input (``x.T`` or ``y.T`` into ``x``): it would be a host
      view, and no kernel would write ``X``."""
    x = fusion.inputs[a]
    assert isinstance(x, BlockArgument)
    return (
        reads_misaligned(x)
        or any(not same or reads_misaligned(fusion.inputs[j]) for j, same in _memory_sharers(launches, a).items())
        or _feeds_other_outputs(x, v, fusion.output_op)
        or _view_chain(v) is not None
    )


def guard_inplace_races(fusion: F.FusionOp, launches: Sequence[H.LaunchOp] = ()) -> bool:
    """Insert ``fuser.segment_set`` before every racy in-place output; returns
    whether anything changed (``needs_cut`` says when)."""
    term = fusion.output_op
    aliases = term.get_alias_inputs()
    values = list(term.values)
    changed = False
    for i, (v, a) in enumerate(zip(values, aliases, strict=True)):
        if a < 0:
            continue
        owner = v.owner
        if isinstance(owner, F.SegmentSetOp):
            continue
        x = fusion.inputs[a]
        assert isinstance(x, BlockArgument)
        if not needs_cut(fusion, launches, a, v):
            continue
        cut = F.SegmentSetOp(v)
        fusion.body.block.insert_op_before(cut, term)
        values[i] = cut.results[0]
        changed = True
    if changed:
        set_fusion_outputs(fusion, values, aliases)
    return changed


# ---- 2. outputs that are views of inputs ------------------------------------------


def _view_chain(v: SSAValue) -> tuple[BlockArgument, list[Operation], list[F.TensorType]] | None:
    """The fusion input ``v`` views, the view ops from it to ``v`` and their host
    types; None when a copy is needed somewhere."""
    ops: list[Operation] = []
    while not isinstance(v, BlockArgument):
        op = v.owner
        assert isinstance(op, Operation)
        if not isinstance(op, F.ViewLikeOp) or len(op.operands) != 1:
            return None
        ops.append(op)
        v = op.operands[0]
    if not isinstance(v.type, F.TensorType):
        return None
    ops.reverse()
    types: list[F.TensorType] = []
    t = v.type
    for op in ops:
        nt = input_end_type(op, t)
        if nt is None:
            return None
        types.append(nt)
        t = nt
    return v, ops, types


def hoist_view_outputs(fusion: F.FusionOp, launches: list[H.LaunchOp]) -> list[H.LaunchOp]:
    """Move outputs that are views of inputs to the host; returns the launches left."""
    term = fusion.output_op
    aliases = term.get_alias_inputs()
    returned = [i for i, a in enumerate(aliases) if a < 0]
    hoisted: dict[int, tuple[BlockArgument, list[Operation], list[F.TensorType]]] = {}
    declared = fusion.function_type.outputs.data
    for k, i in enumerate(returned):
        t = declared[k]
        if isinstance(t, F.TensorType) and not t.has_default_layout:
            continue  # this return is asked for in a layout: a kernel writes it
        chain = _view_chain(term.values[i])
        if chain is not None:
            hoisted[k] = chain
    if not hoisted:
        return launches
    keep = [i for k, i in enumerate(returned) if k not in hoisted]
    kept_aliased = [i for i, a in enumerate(aliases) if a >= 0]
    values = [term.values[i] for i in sorted(keep + kept_aliased)]
    new_aliases = [aliases[i] for i in sorted(keep + kept_aliased)]
    kept_types = [declared[k] for k in range(len(returned)) if k not in hoisted]
    set_fusion_outputs(
        fusion, values, new_aliases if any(a >= 0 for a in new_aliases) else None, kept_types
    )
    erase_dead_ops(fusion.body.block)
    new_types = list(fusion.function_type.outputs.data)
    rebuilt: list[H.LaunchOp] = []
    for launch in launches:
        for k, (arg, ops, types) in hoisted.items():
            x: SSAValue = launch.args[arg.index]
            for op, t in zip(ops, types, strict=True):
                vops = host_view_ops_typed(op, x, t)
                block = launch.parent_block()
                assert block is not None
                block.insert_ops_before(vops, launch)
                x = vops[-1].results[0]
            launch.res[k].replace_all_uses_with(x)
        if not values:
            erase_op(launch)
            continue
        new = rebuild_launch(launch, list(launch.args), new_types)
        kept = [k for k in range(len(returned)) if k not in hoisted]
        for j, k in enumerate(kept):
            launch.res[k].replace_all_uses_with(new.res[j])
        erase_op(launch)
        rebuilt.append(new)
    if not values:
        erase_op(fusion)
    return rebuilt


# ---- 3. in-place updates as hir aliases -------------------------------------------


def inplace_to_aliases(fusion: F.FusionOp, launches: list[H.LaunchOp]) -> list[H.LaunchOp]:
    term = fusion.output_op
    aliases = term.get_alias_inputs()
    if all(a < 0 for a in aliases):
        return launches
    returned = [v for v, a in zip(term.values, aliases, strict=True) if a < 0]
    updated = [(v, a) for v, a in zip(term.values, aliases, strict=True) if a >= 0]
    n = len(returned)
    set_fusion_outputs(fusion, returned + [v for v, _ in updated])
    new_types = list(fusion.function_type.outputs.data)
    rebuilt: list[H.LaunchOp] = []
    for launch in launches:
        new = rebuild_launch(launch, list(launch.args), new_types)
        for old, r in zip(launch.res, new.res, strict=False):
            old.replace_all_uses_with(r)
        erase_op(launch)
        marks = [H.AliasOp(new.res[n + j], new.args[a]) for j, (_, a) in enumerate(updated)]
        block = new.parent_block()
        assert block is not None
        block.insert_ops_after(marks, new)
        rebuilt.append(new)
    return rebuilt


# ---- 4. preallocated outputs ------------------------------------------------------


def alias_target(v: SSAValue) -> SSAValue | None:
    for use in v.uses:
        op = use.operation
        if isinstance(op, H.AliasOp) and op.value == v:
            return op.target
    return None


def read_elsewhere(fusion: F.FusionOp, launch: H.LaunchOp, target: SSAValue) -> bool:
    """Whether ``launch`` reads ``target``'s buffer other than element by element
    through ``target`` itself (a view of it, or a misaligned read): writing its
    in-place result straight into ``target`` would race with those reads (``x =
    x.T`` in place), so the result gets a buffer of its own, which ``hir.alias``
    copies into ``target`` after the launch."""
    for j in args_sharing(launch, target):
        x = fusion.inputs[j]
        assert isinstance(x, BlockArgument)
        if launch.args[j] is not target or reads_misaligned(x):
            return True
    return False


def preallocate_outputs(
    fusion: F.FusionOp, launch: H.LaunchOp, allow_preallocated: bool = True
) -> H.LaunchOp:
    """Rewrite ``launch`` to write into buffers (``outs``) when every output extent
    is known on the host; returns the launch in place of ``launch``."""
    if launch.outs or not launch.res:
        return launch
    extents = symbolic_extents(fusion)
    outs_values = fusion.output_op.returned_values()
    ext_lists = []
    for v in outs_values:
        if not isinstance(v.type, F.TensorType):
            return launch
        ext = extents.get(v)
        if ext is None or any(e is None for e in ext):
            return launch
        ext_lists.append(ext)
    program = launch.parent_op()
    top_level = isinstance(program, H.ProgramOp)
    ret = program.return_op if isinstance(program, H.ProgramOp) else None
    new_ops: list[Operation] = []
    buffers: list[SSAValue] = []
    prealloc: list[tuple[int, SSAValue]] = []
    for k, (r, ext) in enumerate(zip(launch.res, ext_lists, strict=True)):
        target = alias_target(r)
        if target is not None and not read_elsewhere(fusion, launch, target):
            buffers.append(target)
            continue
        sizes: list[SSAValue] = []
        for e in ext:
            if isinstance(e, InputExtent):
                sops, svals = host_sizes(launch.args[e.input], [e.axis])
                new_ops += sops
                sizes += svals
        t = r.type
        assert isinstance(t, F.TensorType)
        returned_once = (
            allow_preallocated
            and top_level
            and ret is not None
            and sum(1 for v in ret.values if v == r) == 1
        )
        declared = fusion.function_type.outputs.data[k]
        order = None
        if isinstance(declared, F.TensorType) and not declared.has_default_layout:
            order = list(declared.get_stride_order())  # the layout the caller asked for
        alloc = H.AllocateOp(
            F.TensorType(t.get_shape(), t.element_type, None, order), sizes, preallocated=returned_once
        )
        new_ops.append(alloc)
        buffers.append(alloc.result)
        if returned_once:
            prealloc.append((k, alloc.result))
    block = launch.parent_block()
    assert block is not None
    block.insert_ops_before(new_ops, launch)
    new = rebuild_launch(launch, list(launch.args), [r.type for r in launch.res], buffers)
    for old, r in zip(launch.res, new.res, strict=True):
        old.replace_all_uses_with(r)
    erase_op(launch)
    if ret is not None and prealloc:
        swap = {new.res[k]: buf for k, buf in prealloc}
        ret.operands = [swap.get(v, v) for v in ret.operands]
    return new


# ---- the pass ---------------------------------------------------------------------


def mark_aliases(module: ModuleOp, preallocate: bool = True) -> None:
    """Run the four rewrites on every launched fusion of ``module``."""
    ensure_programs(module)
    table = launches_by_callee(module)
    for name, fusion in fusions_by_name(module).items():
        launches = table.get(name, [])
        if not launches or any(la.outs for la in launches):
            continue
        guard_inplace_races(fusion, launches)
        launches = hoist_view_outputs(fusion, launches)
        if not launches:
            continue
        launches = inplace_to_aliases(fusion, launches)
        if preallocate:
            for la in launches:
                preallocate_outputs(fusion, la)


@dataclass(frozen=True)
class MarkAliases(ModulePass):
    """Views of inputs to the host, in-place updates as ``hir.alias``, the in-place
    race cut with ``segment_set``, and preallocated outputs."""

    name = "mark-aliases"

    preallocate: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mark_aliases(op, self.preallocate)
