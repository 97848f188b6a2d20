"""Persistent buffers: tensors that must stay live across a reduction.

A normalization reads a tensor, reduces it, broadcasts the result back and combines
it with values computed from that same tensor. Those values must be kept (in
registers or shared memory) from before the reduction until after it, or re-read.
For reduction ``R`` with input ``r``, a tensor ``v`` is a persistent buffer of ``R``
when

* ``v`` is ``r`` or one of its producers (it is needed to compute ``R``),
* ``v`` has a use, other than on the way to ``R``, that feeds a consumer of ``R``'s
  result (it is needed again after ``R``), and
* ``v`` spans a reduced axis (the axis is not of extent 1): per-row values such as a
  ``mean`` of shape ``[?, 1]`` are not buffers.

In softmax (``x -> max -> sub -> exp -> sum -> div``) the buffers are ``x`` (for
``max``) and ``exp(x - max)`` (for ``sum``)::

    %1 = fuser.max %0 ...          // %0 is persistent: fuser.sub uses it after %1
    %4 = fuser.exp %3 ...          // %4 is persistent: fuser.div uses it after %5
    %5 = fuser.sum %4 ...

*Projection to inputs* (nvFuser's project-to-inputs): a buffer can instead be
recomputed after the reduction from the fusion inputs it is computed from (and from
earlier reductions' results, which are small). Softmax projects ``exp(x - max)`` to
``x``, so one float per element is kept instead of two. The schedulers project when
that makes the buffers smaller.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from fuser.ir.dialects.fuser import FusionOp, OutputOp, SizeOp, TensorType
from fuser.ir.shapes import DYN

from .graph import (
    body_ops,
    is_reduction,
    itemsize,
    reduction_dims,
    reduction_input,
)
from .sizes import ConcreteSizes


@dataclass(frozen=True)
class PersistentBuffer:
    value: SSAValue
    reduction: Operation
    """The (first) reduction across which ``value`` must stay live."""
    inputs: tuple[SSAValue, ...]
    """Fusion tensor inputs spanning the reduced axes that ``value`` is computed
    from: what is kept instead when the buffer is projected to inputs."""


@dataclass(frozen=True)
class PersistentBufferInfo:
    buffers: tuple[PersistentBuffer, ...]

    @property
    def values(self) -> tuple[SSAValue, ...]:
        return tuple(b.value for b in self.buffers)

    def projected(self) -> tuple[tuple[SSAValue, Operation], ...]:
        """The fusion inputs kept when every buffer is projected, each with the
        reduction it is kept across (in order, without repeats)."""
        out: dict[SSAValue, Operation] = {}
        for b in self.buffers:
            for i in b.inputs:
                out.setdefault(i, b.reduction)
        return tuple(out.items())

    def __bool__(self) -> bool:
        return bool(self.buffers)


def _aligned_reduced_extents(
    v_shape: Sequence[int], r_shape: Sequence[int], dims: Sequence[int]
) -> list[int]:
    """The extents of ``v`` along the reduced axes of ``r``, shapes right-aligned."""
    offset = len(r_shape) - len(v_shape)
    return [v_shape[d - offset] for d in dims if 0 <= d - offset < len(v_shape)]


def _spans_reduced_axis(v: SSAValue, red: Operation) -> bool:
    vt = v.type
    rt = reduction_input(red).type
    if not isinstance(vt, TensorType) or not isinstance(rt, TensorType):
        return False
    ext = _aligned_reduced_extents(vt.get_shape(), rt.get_shape(), reduction_dims(red))
    return any(e == DYN or e > 1 for e in ext)


def _projection_inputs(bits: int, args: Sequence[SSAValue], red: Operation) -> tuple[SSAValue, ...]:
    """The fusion inputs spanning ``red``'s reduced axes in a value's producer cone,
    which stops at fusion inputs and at reduction results (per-row, cheap); ``bits``
    is the cone's tensor inputs as a bit set of argument indices."""
    found: list[SSAValue] = []
    while bits:
        low = bits & -bits
        a = args[low.bit_length() - 1]
        if _spans_reduced_axis(a, red):
            found.append(a)
        bits ^= low
    return tuple(found)


_CACHE: OrderedDict[int, tuple[FusionOp, tuple, PersistentBufferInfo]] = OrderedDict()
"""The analyses of the last ``_CACHE_SIZE`` fusions asked about, by ``id``, each with
the fusion and the body it analysed (``find_persistent_buffers``). Bounded: an
analysis holds the fusion's values (and through them the fusion), so a cache keyed
weakly by the fusion would keep every fusion alive."""
_CACHE_SIZE = 16


def find_persistent_buffers(fusion: FusionOp) -> PersistentBufferInfo:
    """``analyze_persistent_buffers(fusion)``, remembered for the fusion while its
    tensor ops (and each op's operands) are unchanged (a schedule written since does
    not change it): the registry's checks and
    heuristics and ``schedule-fusions`` ask for it several times (9 analyses of a
    10,000-op fusion, 1.6 s, in ``benchmarks/compile_scaling.py``'s DAG)."""
    body = tuple((op, *op.operands) for op in _tensor_ops(fusion.body.block))
    hit = _CACHE.get(id(fusion))
    if hit is not None and hit[0] is fusion and hit[1] == body:
        _CACHE.move_to_end(id(fusion))
        return hit[2]
    info = analyze_persistent_buffers(fusion)
    _CACHE[id(fusion)] = (fusion, body, info)
    _CACHE.move_to_end(id(fusion))
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return info


def analyze_persistent_buffers(fusion: FusionOp) -> PersistentBufferInfo:
    """The persistent buffers of every reduction (see the module docstring), each
    with the first reduction it is kept across, in the order of those reductions and
    then of the values' positions.

    For reduction ``R`` a value ``v`` is a buffer when ``v`` is ``R``'s input or one
    of its producers, spans a reduced axis, and has a user ``u`` other than ``R`` and
    off the way to ``R`` that is after ``R`` (consumes its result, transitively) or
    feeds a value that something after ``R`` uses. The relations are bit sets over
    the reductions, propagated once forward and once backward over the body, so the
    analysis is linear in the ops (times the number of reductions / 64)."""
    block = fusion.body.block
    ops = _tensor_ops(block)
    reds = [op for op in body_ops(fusion) if is_reduction(op)]
    if not reds:
        return PersistentBufferInfo(())
    bit = {r: 1 << i for i, r in enumerate(reds)}
    # after[u]: reductions whose results ``u`` consumes, transitively
    # (``u in descendant_ops(R.results)``; never the terminator).
    after: dict[Operation, int] = {}
    # inputs_of[v]: the fusion's tensor inputs in ``v``'s cone up to reduction results
    inputs_of: dict[SSAValue, int] = {}
    for a in block.args:
        if isinstance(a.type, TensorType):
            inputs_of[a] = 1 << a.index
    for op in ops:
        acc = 0
        cone = 0
        for o in op.operands:
            p = o.owner
            if isinstance(p, Operation):
                acc |= after.get(p, 0) | bit.get(p, 0)
            cone |= inputs_of.get(o, 0)
        if not isinstance(op, OutputOp):
            after[op] = acc
        if not is_reduction(op):
            for r in op.results:
                inputs_of[r] = cone
    # before[v]: reductions whose input ``v`` is or is computed from (``v in
    # ancestors([R.input])``); needed_after[v]: reductions after which something
    # uses ``v`` or a value computed from it (``v in ancestors(operands of
    # descendant_ops(R.results))``).
    before: dict[SSAValue, int] = {}
    needed_after: dict[SSAValue, int] = {}
    for r in reds:
        x = reduction_input(r)
        before[x] = before.get(x, 0) | bit[r]

    def backward(v: SSAValue) -> None:
        b = before.get(v, 0)
        n = 0
        for use in v.uses:
            u = use.operation
            if isinstance(u, OutputOp) or not _is_tensor_op(u):
                continue
            n |= after.get(u, 0)
            for res in u.results:
                b |= before.get(res, 0)
                n |= needed_after.get(res, 0)
        before[v] = b
        needed_after[v] = n

    for op in reversed(ops):
        for res in op.results:
            backward(res)
    for a in block.args:
        backward(a)
    # For each tensor value: the reductions it is a buffer of (lowest bit first)
    found: list[tuple[int, tuple[int, int], SSAValue, Operation]] = []
    position = {op: i for i, op in enumerate(ops)}
    red_index = {r: i for i, r in enumerate(reds)}
    for v in _values(block, ops):
        if not isinstance(v.type, TensorType):
            continue
        cand = 0
        for use in v.uses:
            u = use.operation
            if isinstance(u, SizeOp) or not _is_tensor_op(u):
                continue  # fuser.size only reads metadata; iterdomain ops annotate
            # u is off the way to R (not R, not a producer of R's input) and u is
            # after R or feeds what is used after R
            on_the_way = bit.get(u, 0)
            later = 0
            if not isinstance(u, OutputOp):
                later = after.get(u, 0)
            for res in u.results:
                on_the_way |= before.get(res, 0)
                later |= needed_after.get(res, 0)
            cand |= later & ~on_the_way
        cand &= before.get(v, 0)
        while cand:
            low = cand & -cand
            red = reds[low.bit_length() - 1]
            if _spans_reduced_axis(v, red):
                pos = (-1, v.index) if isinstance(v, BlockArgument) else (position[v.owner], v.index)  # type: ignore[index]
                found.append((red_index[red], pos, v, red))
                break
            cand ^= low
    found.sort(key=lambda f: (f[0], f[1]))
    return PersistentBufferInfo(
        tuple(
            PersistentBuffer(v, red, _projection_inputs(inputs_of.get(v, 0), block.args, red))
            for _, _, v, red in found
        )
    )


def _is_tensor_op(op: Operation) -> bool:
    """A ``fuser`` op (the terminator included), not an ``iterdomain`` schedule op:
    what the analysis walks (a schedule names tensors but computes nothing)."""
    return op.name.startswith("fuser.")


def _tensor_ops(block: Block) -> list[Operation]:
    return [op for op in block.ops if _is_tensor_op(op)]


def _values(block: Block, ops: Sequence[Operation]) -> Iterator[SSAValue]:
    yield from block.args
    for op in ops:
        yield from op.results


@dataclass(frozen=True)
class BufferSizes:
    """Bytes that one row (one iteration element) keeps live across the reduction."""

    unprojected: int
    projected: int
    unprojected_words: int = 0
    projected_words: int = 0
    """The same rows in 32-bit registers, one a value (two for an 8-byte one): what a
    kernel holding them in registers needs (a bfloat16 buffer is 2 bytes a value in
    memory, a whole register in a thread). 0: a quarter of the bytes."""

    @property
    def project_to_inputs(self) -> bool:
        return self.projected < self.unprojected

    @property
    def bytes_per_row(self) -> int:
        return min(self.projected, self.unprojected)

    @property
    def words_per_row(self) -> int:
        """32-bit registers the held buffers take a row."""
        words = self.projected_words if self.project_to_inputs else self.unprojected_words
        return words or -(-self.bytes_per_row // 4)


def _row_bytes(v: SSAValue, red: Operation, sizes: ConcreteSizes) -> int:
    ext = _aligned_reduced_extents(
        sizes.shape(v), sizes.shape(reduction_input(red)), reduction_dims(red)
    )
    n = 1
    for e in ext:
        n *= e
    return n * itemsize(v)


def _rows(buffers: Iterable[tuple[SSAValue, Operation]], sizes: ConcreteSizes) -> tuple[int, int]:
    """Bytes and 32-bit registers (one a value, two for an 8-byte one) that a row of
    ``buffers`` (value, its reduction) takes."""
    total_bytes = total_words = 0
    for v, red in buffers:
        n, size = _row_bytes(v, red, sizes), itemsize(v)
        total_bytes += n
        total_words += n // size * max(1, size // 4)
    return total_bytes, total_words


def buffer_sizes(info: PersistentBufferInfo, sizes: ConcreteSizes) -> BufferSizes:
    unprojected, unprojected_words = _rows(((b.value, b.reduction) for b in info.buffers), sizes)
    projected, projected_words = _rows(info.projected(), sizes)
    return BufferSizes(unprojected, projected, unprojected_words, projected_words)
