"""Programs of every ``hir`` communication op for the multi-device tests, the inputs of
each rank and the outputs numpy expects (every rank's inputs are known to all)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from fuser.ir.context import make_context

BF16 = ml_dtypes.bfloat16


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def ty(shape: list[int], element: str = "f32") -> str:
    return f"!fuser.tensor<{'x'.join(map(str, shape))}x{element}>"


def mesh(devices: list[int]) -> str:
    return f"#iterdomain.mesh<{devices}>"


# =====================================================================================
# Every communication, on d ranks
# =====================================================================================

RESULTS = [
    "g0", "g1", "w", "r", "r2", "rs0", "rs1", "sh0", "sh1", "bflat", "wide", "ring", "hg", "hr",
]


def all_communications(d: int, peers: str = "inputs") -> str:
    """A program of every communication op on the mesh of ``d`` ranks; the inputs are
    ``local_inputs(rank, d)``, the results ``RESULTS``. The ring's peers are the
    program's last two inputs (``peers="inputs"``) or computed from
    ``hir.mesh_position`` (``"computed"``: the program takes the first three
    inputs only)."""
    m = mesh(list(range(d)))
    x, big, h = ty([2, 3]), ty([2 * d, 3 * d]), ty([2, 4], "bf16")
    s = "array<i64: 1, 1>"
    types = {
        "g0": ty([2 * d, 3]), "g1": ty([2, 3 * d]), "w": ty([2 * d, 5]), "r": x, "r2": x,
        "rs0": ty([2, 3 * d]), "rs1": ty([2 * d, 3]), "sh0": ty([2, 3 * d]),
        "sh1": ty([2 * d, 3]), "bflat": ty([2 * d, 3]), "wide": ty([2, 5]), "ring": x,
        "hg": ty([2, 4 * d], "bf16"), "hr": h,
    }
    if peers == "inputs":
        ring_inputs, ring_peers = ", %next : index, %prev : index", ""
    else:
        ring_inputs = ""
        ring_peers = f"""
    %pos = hir.mesh_position {{mesh = {m}}} : index
    %pos1 = arith.addi %pos, %c1 : index
    %next = arith.remsi %pos1, %cd : index
    %posl = arith.addi %pos, %clast : index
    %prev = arith.remsi %posl, %cd : index"""
    results = ", ".join(f"%{n}" for n in RESULTS)
    result_types = ", ".join(types[n] for n in RESULTS)
    return f"""
builtin.module {{
  hir.program @main(%x : {x}, %big : {big}, %h : {h}{ring_inputs}) -> ({result_types}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cd = arith.constant {d} : index
    %clast = arith.constant {d - 1} : index{ring_peers}
    %g0 = hir.allocate : {types["g0"]}
    hir.allgather %x, %g0 {{mesh = {m}, axis = 0 : i64}} : {x}, {types["g0"]}
    %g1 = hir.allocate : {types["g1"]}
    hir.allgather %x, %g1 {{mesh = {m}, axis = 1 : i64}} : {x}, {types["g1"]}
    %w = hir.allocate {{zero_init}} : {types["w"]}
    %wv = hir.slice %w {{starts = array<i64: 0, 1>, ends = array<i64: {2 * d}, 4>, strides = {s}}} : {types["w"]} -> {types["g0"]}
    hir.allgather %x, %wv {{mesh = {m}, axis = 0 : i64}} : {x}, {types["g0"]}
    %r = hir.allocate : {x}
    hir.allreduce %x, %r {{mesh = {m}}} : {x}, {x}
    %r2 = hir.allocate : {x}
    hir.allreduce %x, %r2 {{mesh = {m}}} : {x}, {x}
    hir.allreduce %r2, %r2 {{mesh = {m}}} : {x}, {x}
    %rs0 = hir.allocate : {types["rs0"]}
    hir.reduce_scatter %big, %rs0 {{mesh = {m}, axis = 0 : i64}} : {big}, {types["rs0"]}
    %rs1 = hir.allocate : {types["rs1"]}
    hir.reduce_scatter %big, %rs1 {{mesh = {m}, axis = 1 : i64}} : {big}, {types["rs1"]}
    %sh0 = hir.allocate : {types["sh0"]}
    hir.shard %big, %sh0 {{mesh = {m}, axis = 0 : i64}} : {big}, {types["sh0"]}
    %sh1 = hir.allocate : {types["sh1"]}
    hir.shard %big, %sh1 {{mesh = {m}, axis = 1 : i64}} : {big}, {types["sh1"]}
    %bb = hir.allocate : {ty([d, 2, 3])}
    hir.for %j = %c0 to %cd step %c1 {{
      %s0 = hir.get_current_stream : !hir.stream
      %s = hir.stream_for_index %j : index
      hir.set_current_stream %s
      hir.synchronize_stream %s0
      %bj = hir.alias_select %bb[axis = 0, %j] : {ty([d, 2, 3])}, index -> {x}
      hir.broadcast_from %x, %bj root(%j : index) {{mesh = {m}}} : {x}, {x}
      hir.set_current_stream %s0
      hir.synchronize_stream %s
    }}
    %bflat = hir.reshape %bb {{new_shape = array<i64: {2 * d}, 3>}} : {ty([d, 2, 3])} -> {types["bflat"]}
    %wide = hir.allocate {{zero_init}} : {types["wide"]}
    %col = hir.slice %wide {{starts = array<i64: 0, 1>, ends = array<i64: 2, 4>, strides = {s}}} : {types["wide"]} -> {x}
    hir.broadcast_from %x, %col root(%clast : index) {{mesh = {m}}} : {x}, {x}
    %ring = hir.allocate : {x}
    hir.send %x to(%next : index) {{mesh = {m}}} : {x}
    hir.recv %ring from(%prev : index) {{mesh = {m}}} : {x}
    %hg = hir.allocate : {types["hg"]}
    hir.allgather %h, %hg {{mesh = {m}, axis = 1 : i64}} : {h}, {types["hg"]}
    %hr = hir.allocate : {h}
    hir.allreduce %h, %hr {{mesh = {m}}} : {h}, {h}
    hir.return {results} : {result_types}
  }}
}}
"""


def local_inputs(rank: int, d: int) -> list[Any]:
    """Rank ``rank``'s inputs of ``all_communications(d)``."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3) + 100 * rank
    big = np.arange(6 * d * d, dtype=np.float32).reshape(2 * d, 3 * d) * (rank + 1)
    h = (np.arange(8, dtype=np.float32).reshape(2, 4) - 3 + 10 * rank).astype(BF16)
    return [x, big, h, (rank + 1) % d, (rank - 1) % d]


def expected_outputs(rank: int, d: int) -> dict[str, np.ndarray]:
    inputs = [local_inputs(r, d) for r in range(d)]
    xs = [i[0] for i in inputs]
    bigs_sum = sum(i[1] for i in inputs)
    big = inputs[rank][1]
    gathered = np.concatenate(xs, axis=0)
    w = np.zeros((2 * d, 5), np.float32)
    w[:, 1:4] = gathered
    wide = np.zeros((2, 5), np.float32)
    wide[:, 1:4] = xs[-1]
    x_sum = sum(xs)
    h_sum = sum(i[2].astype(np.float32) for i in inputs).astype(BF16)
    return {
        "g0": gathered,
        "g1": np.concatenate(xs, axis=1),
        "w": w,
        "r": x_sum,
        "r2": d * x_sum,
        "rs0": bigs_sum[2 * rank : 2 * rank + 2, :],
        "rs1": bigs_sum[:, 3 * rank : 3 * rank + 3],
        "sh0": big[2 * rank : 2 * rank + 2, :],
        "sh1": big[:, 3 * rank : 3 * rank + 3],
        "bflat": gathered,
        "wide": wide,
        "ring": xs[(rank - 1) % d],
        "hg": np.concatenate([i[2] for i in inputs], axis=1),
        "hr": h_sum,
    }
