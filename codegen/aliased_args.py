"""Which kernel arguments may point into one buffer: an in-place update's.

The printer declares a tensor argument the kernel only reads ``const T* __restrict__``
(NVRTC then loads it through the read-only path, ``ld.global.nc``) and one it writes
``T* __restrict__``. Both promise that no other argument reaches the same memory. An
in-place update breaks that promise: ``mark-aliases`` makes the launch write output
``j`` into the buffer of its input ``i`` (``hir.launch @f(%x, ...) outs(%x)``), and a
segment may alias an output to an input itself (``alias_inputs``). The kernel then
reads ``in{i}`` and writes ``out{j}`` at the same addresses: undefined behaviour under
``__restrict__``, and read-only loads of memory that changes while the kernel (or,
with programmatic dependent launch, the kernel after it) runs.

``mark_aliased_args(lowered, in_place)`` lists, on each kernel of a lowered segment,
the positions of the arguments that are such an input or output
(``kernel.func``'s ``aliased_args``); the printer declares them plain ``T*``::

    kernel.func @k(%in0 : memref<?xf32>, %in1 : memref<?xf32>, %out0 : memref<?xf32>)
        attributes {..., aliased_args = array<i64: 0, 2>}

    extern "C" __global__ void ... k(float* in0, const float* __restrict__ in1,
                                     float* out0)

``in_place`` pairs come from the program (``in_place_pairs``: what ``fuser-opt`` and
``fd.generate_cuda_code`` show) or, at run time, from the pointers themselves
(``runtime/compile_fusion.launch_fusion``: an output buffer that is an input's).

Before it marks them, ``mark_aliased_args`` checks the order of the accesses
(``check_in_place_order``): in the kernel that stores ``out{j}``, every load of
``in{i}`` comes before the first store of ``out{j}`` at the same element (the element
is told by the structure of the index computation), and no kernel after it loads
``in{i}``. "Before" is program order with two exceptions:

- loop back edges: ``mark-aliases`` leaves an update uncut only where ``in{i}`` is
  read at the element being written, so a later iteration reads other elements;
- the two branches of an ``scf.if``: the vector body and the lane-by-lane edge of a
  partial last vector touch the same elements, never in one call; after the ``if``,
  both branches' stores count.

A segment that breaks this would read values it has already overwritten; it is a
``LoweringError`` naming the kernel, not a wrong result.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects import memref, scf, vector
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from fuser.codegen.cuda_printer import kernels_of
from fuser.codegen.lower.common import LoweredFusion, LoweringError
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H

__all__ = ["check_in_place_order", "in_place_pairs", "mark_aliased_args"]


def in_place_pairs(launch: H.LaunchOp, seg: F.FusionOp) -> tuple[tuple[int, int], ...]:
    """(output ``j``, input ``i``) for every output of ``seg`` that ``launch`` writes
    into the buffer of its argument ``i``: an output the segment aliases to an input
    (``alias_inputs``), or a returned output whose ``outs`` buffer is one of the
    launch's arguments."""
    outs = list(launch.outs)
    args = list(launch.args)
    pairs: list[tuple[int, int]] = []
    returned = 0
    for j, alias in enumerate(seg.output_op.get_alias_inputs()):
        if alias >= 0:
            pairs.append((j, alias))
            continue
        if returned < len(outs):
            buf = outs[returned]
            pairs.extend((j, i) for i, a in enumerate(args) if a is buf)
        returned += 1
    return tuple(sorted(set(pairs)))


def mark_aliased_args(lowered: LoweredFusion, in_place: Sequence[tuple[int, int]]) -> None:
    """Set ``aliased_args`` on the kernels of ``lowered`` that take an input or an
    output of the ``in_place`` pairs (output ``j``, input ``i``)."""
    if not in_place:
        return
    check_in_place_order(lowered, in_place)
    inputs = {i for _, i in in_place}
    outputs = {j for j, _ in in_place}
    for kernel in lowered.kernels:
        positions = [
            p for p, a in enumerate(kernel.args)
            if (a.kind == "input" and a.index in inputs) or (a.kind == "output" and a.index in outputs)
        ]
        if not positions:
            continue
        funcs = [f for f in kernels_of(kernel.module) if f.sym_name.data == kernel.name]
        if len(funcs) != 1 or len(funcs[0].args) != len(kernel.args):
            # Never leave an aliased argument __restrict__ on a guess.
            raise LoweringError(f"kernel {kernel.name}: its module has no kernel.func @{kernel.name} "
                                f"of its {len(kernel.args)} arguments to mark aliased_args on")
        funcs[0].attributes["aliased_args"] = DenseArrayBase.from_list(i64, positions)


Stores = dict[int, set[tuple[object, ...]]]
"""An output's index -> the address keys (``_address_key``) it was stored at."""


def _in_program_order(func: Operation, stores: Stores) -> Iterator[tuple[Operation, Stores]]:
    """The ops of ``func`` in program order, each with the stores that may have run
    before it: ``stores`` itself, except in a branch of an ``scf.if``, which starts
    from what ran before the ``if`` (the other branch never runs with it; the vector
    body and the lane-by-lane edge of a partial vector store and load the same
    elements). After the ``if``, ``stores`` holds both branches' stores."""
    todo: list[tuple[Iterator[Operation], Stores]] = [
        (iter(func.regions[0].block.ops), stores)
    ]
    # (the stores before an ``if``, its branches' stores, the depth the ``if`` is at)
    joins: list[tuple[Stores, list[Stores], int]] = []
    while todo:
        ops, here = todo[-1]
        op = next(ops, None)
        if op is None:
            todo.pop()
            if joins and len(todo) == joins[-1][2]:
                target, branches, _ = joins.pop()
                for branch in branches:
                    for j, keys in branch.items():
                        target.setdefault(j, set()).update(keys)
            continue
        yield op, here
        if isinstance(op, scf.IfOp) and all(r.blocks for r in op.regions):
            branches = [{j: set(keys) for j, keys in here.items()} for _ in op.regions]
            joins.append((here, branches, len(todo)))
            todo.extend(
                (iter(r.block.ops), b) for r, b in zip(reversed(op.regions), reversed(branches), strict=True)
            )
        else:
            todo.extend((iter(b.ops), here) for r in reversed(op.regions) for b in reversed(r.blocks))


def _accessed(op: Operation) -> tuple[SSAValue, Sequence[SSAValue], bool] | None:
    """The memref ``op`` reads or writes, its indices, and whether it writes."""
    if isinstance(op, memref.LoadOp):
        return op.memref, op.indices, False
    if isinstance(op, vector.LoadOp):
        return op.base, op.indices, False
    if isinstance(op, memref.StoreOp):
        return op.memref, op.indices, True
    if isinstance(op, vector.StoreOp):
        return op.base, op.indices, True
    return None


def _address_key(values: Sequence[SSAValue], memo: dict[SSAValue, object]) -> tuple[object, ...]:
    """A structural key of index values: two accesses whose indices are computed by
    the same ops from the same launch indices, loop variables and constants get the
    same key (the same element of one thread, even where the kernel computed the
    index again); different constants or variables (another element) differ."""
    todo = [v for v in values if v not in memo]
    while todo:
        v = todo[-1]
        if v in memo:
            todo.pop()
            continue
        if isinstance(v, BlockArgument):
            memo[v] = ("arg", id(v.owner), v.index)
            todo.pop()
            continue
        op = v.owner
        assert isinstance(op, Operation)
        pending = [x for x in op.operands if x not in memo]
        if pending:
            todo.extend(pending)
            continue
        attrs = tuple(sorted((k, str(a)) for k, a in {**op.properties, **op.attributes}.items()))
        memo[v] = (op.name, attrs, tuple(memo[x] for x in op.operands), v.index if isinstance(v, OpResult) else 0)
        todo.pop()
    return tuple(memo[v] for v in values)


def check_in_place_order(lowered: LoweredFusion, in_place: Sequence[tuple[int, int]]) -> None:
    """Raise a ``LoweringError`` when a kernel of ``lowered`` may load input ``i`` of
    an ``in_place`` pair (output ``j``, input ``i``) after output ``j`` was stored
    (module docstring): in the kernel that stores it, a load of ``in{i}`` at an
    element it already stored ``out{j}`` at (``_address_key``: a thread that covers
    several elements in turn, as a transpose tile does, loads each before it stores
    it); in a later kernel of the segment, any load of ``in{i}``."""
    stored: set[int] = set()  # outputs some earlier kernel stored
    for kernel in lowered.kernels:
        funcs = [f for f in kernels_of(kernel.module) if f.sym_name.data == kernel.name]
        if len(funcs) != 1 or len(funcs[0].args) != len(kernel.args):
            continue  # mark_aliased_args names this
        role = {
            arg: (a.kind, a.index) for arg, a in zip(funcs[0].args, kernel.args, strict=True)
            if a.kind in ("input", "output")
        }
        memo: dict[SSAValue, object] = {}
        here: Stores = {}  # output -> the addresses stored
        for op, before in _in_program_order(funcs[0], here):
            access = _accessed(op)
            if access is None or access[0] not in role:
                continue
            kind, index = role[access[0]]
            if kind == "output" and access[2]:
                before.setdefault(index, set()).add(_address_key(access[1], memo))
            elif kind == "input" and not access[2]:
                for j, i in in_place:
                    if i != index:
                        continue
                    if j in stored:
                        raise LoweringError(
                            f"kernel {kernel.name}: loads input #{i} after an earlier kernel stored output #{j}, "
                            f"which is written in place into input #{i}: it would read updated values"
                        )
                    if _address_key(access[1], memo) in before.get(j, ()):
                        raise LoweringError(
                            f"kernel {kernel.name}: loads input #{i} at an element where it stored output #{j}, "
                            f"which is written in place into input #{i}: it would read the updated value"
                        )
        stored |= here.keys()
