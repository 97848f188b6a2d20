"""Lower a pointwise segment to one kernel.

The iteration space is the outputs' common shape, traversed in row-major order by a
grid-stride loop over tiles of ``block.x * vectorization * unroll`` elements. A
thread handles ``unroll`` groups of ``vectorization`` consecutive elements; in a
full tile every group is loaded first (128-bit ``vector.load``s where an input is
contiguous along the innermost axis and aligned), then computed and stored with
128-bit ``vector.store``s; the last, partial tile takes a guarded scalar path::

    kernel.func @gelu(%x: memref<?xf32>, %out: memref<?xf32>) attributes {block_size = ...} {
      scf.for %t = %bid to 49152 step %nblocks {           // tiles
        %full = arith.cmpi sle, ...                          // the whole tile in bounds?
        scf.if %full {
          %x_v = vector.load %x[%off0] : memref<?xf32>, vector<4xf32>   // every load first
          ...   mulf / erf / addf on each lane ...
          vector.store %r, %out[%off0] ...
        } else { ... guarded scalar loop ... }
      }
    }

Each output value is computed by ``ElementEvaluator`` at the lane's index, so views
between the ops (reshape, permute, broadcast, slice, pad, cat) are index arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import SSAValue

from fuser.codegen.lower.common import (
    LoweredFusion,
    LoweredKernel,
    LoweringError,
    TensorLayout,
)
from fuser.codegen.lower.elementwise import Dim, ElementEvaluator, Index, begin_kernel, offset_in
from fuser.ir.dialects import fuser as F
from fuser.schedulers.params import PointwiseParams


def _vector_width(params: PointwiseParams, shape: Sequence[int], itemsizes: Sequence[int]) -> int:
    v = max(1, params.vectorization)
    widest = max(itemsizes, default=4)
    while v > 1 and (v * widest > 16 or (shape and shape[-1] % v) or math.prod(shape) % v):
        v //= 2
    return v


def lower_pointwise(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    params: PointwiseParams,
    name: str,
) -> LoweredFusion:
    outs = list(fusion.output_op.values)
    if not outs:
        raise LoweringError(f"@{fusion.sym_name.data}: a pointwise segment needs an output")
    shape = shapes[outs[0]]
    for i, v in enumerate(outs):
        if not isinstance(v.type, F.TensorType):
            raise LoweringError(f"@{fusion.sym_name.data}: output #{i} is a scalar; pointwise kernels write tensors")
        if shapes[v] != shape:
            raise LoweringError(
                f"@{fusion.sym_name.data}: output #{i} has shape {list(shapes[v])}, output #0 "
                f"{list(shape)}; a pointwise kernel writes outputs of one shape"
            )
    n = math.prod(shape)
    itemsizes = [F.dtype_of(v.type).itemsize for v in outs]
    itemsizes += [a.type.dtype.itemsize for a in fusion.inputs if isinstance(a.type, F.TensorType)]
    V = _vector_width(params, shape, itemsizes)
    U = max(1, params.unroll)
    B = params.block[0]
    tile = B * V * U
    ntiles = max(1, -(-n // tile))
    # A 2-D pointwise schedule (break point > 0) is run flat here: exact grid.
    grid = ntiles if params.break_point or params.grid[0] <= 0 else max(1, min(ntiles, params.grid[0]))

    b, ev, args, out_args = begin_kernel(fusion, shapes, in_layouts, out_layouts, name, (B, 1, 1), n)
    tid = b.thread_id("x")

    def lanes_at(base: SSAValue | int, width: int, align: int) -> list[Index]:
        if not shape:
            return [()]
        lin = ev.as_dim(base, align)
        return [ev.unravel(lin.shifted(j), shape) for j in range(width)]

    def store(values: list[SSAValue], j: int, lanes: list[Index]) -> None:
        lay = out_layouts[j]
        dt = F.dtype_of(outs[j].type)
        mem = out_args[j]
        stored = [b.to_storage(v, dt.to_xdsl()) for v in values]
        first = _offset(ev, lay, lanes[0])
        vectorizable = (
            len(lanes) > 1 and lay.strides[-1] == 1 and lay.pointer_align % len(lanes) == 0
            and all(s % len(lanes) == 0 for s in lay.strides[:-1])
        )
        if vectorizable:
            b.vstore(stored, mem, first)
            return
        for v, idx in zip(stored, lanes, strict=True):
            b.store(v, mem, [_offset(ev, lay, idx)])

    def tile_body(t: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        start = b.mul(t, tile, "start")

        def full() -> list[SSAValue]:
            groups = []
            for u in range(U):
                base = b.add(start, b.mul(b.add(tid, u * B), V), f"i{u}")
                groups.append(lanes_at(base, V, V))
            for lanes in groups:  # every load of the thread in flight first
                for v in outs:
                    ev.prefetch(v, lanes)
            for lanes in groups:
                for j, v in enumerate(outs):
                    store([ev.value(v, i) for i in lanes], j, lanes)
            return []

        def tail() -> list[SSAValue]:
            def elem(jj: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                i = b.add(start, jj, "i")

                def inside() -> list[SSAValue]:
                    lanes = lanes_at(i, 1, 1)
                    for j, v in enumerate(outs):
                        store([ev.value(v, lanes[0])], j, lanes)
                    return []

                b.if_(b.cmp("slt", i, n), ev.in_scope(inside))
                return []

            b.for_(tid, tile, B, ev.in_scope(elem), iv_name="j")  # type: ignore[arg-type]
            return []

        if n % tile == 0:
            full()
        else:
            b.if_(b.cmp("sle", b.add(start, tile), n, "full"), ev.in_scope(full), ev.in_scope(tail))  # type: ignore[arg-type]
        return []

    if ntiles == grid:
        tile_body(b.block_id("x"), [])
    else:
        b.for_(b.block_id("x"), ntiles, b.grid_dim("x"), lambda t, c: ev.in_scope(lambda: tile_body(t, c))(),  # type: ignore[arg-type, return-value]
               iv_name="t")
    module = b.finish()
    kernel = LoweredKernel(module, name, (B, 1, 1), (grid, 1, 1), args)
    return LoweredFusion("pointwise", [kernel])


def _offset(ev: ElementEvaluator, lay: TensorLayout, idx: Index) -> int | SSAValue:
    return offset_in(ev, lay.shape, lay.strides, idx)


__all__ = ["Dim", "lower_pointwise"]
