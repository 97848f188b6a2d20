"""Issue 17's CPU acceptance: whole fusions on 2 and 4 gloo processes equal the
single-process reference.

* the tensor-parallel MLP (``linear``, ``gelu``, ``linear``; column- then row-sharded
  weights, with biases): an allreduce of the second linear's partial sums;
* the sequence-parallel layer norm (rows sharded): no communication;
* the sequence-parallel input gathered into a column-parallel linear, plain and
  overlapped (``overlap-allgather-matmul{chunks=2}``), and an output declared
  replicated (an allgather) next to a sum over the sharded rows (an allreduce);
* a row-parallel linear whose output is declared row-sharded: one reduce-scatter;
* the same MLP through nvFuser's frontend (``multidevice_schedule``, ``fd.execute`` on
  each rank's shards).

Every rank builds the same global inputs (one seed), runs its shards through
``MultiDeviceFusion.run`` with the gloo ``Communicator`` (fuser's CPU path: the host
program's launches through the reference interpreter), and the test compares each
rank's outputs with the slice of the single-process result its output sharding says.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.multidevice.harness import run_ranks

MLP = """
fuser.fusion @mlp(%x: !fuser.tensor<8x16xf32>, %w1: !fuser.tensor<32x16xf32>, %b1: !fuser.tensor<32xf32>,
                  %w2: !fuser.tensor<16x32xf32>, %b2: !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32> {
  %h = fuser.linear %x, %w1, %b1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<32x16xf32>, !fuser.tensor<32xf32>) -> !fuser.tensor<8x32xf32>
  %c = fuser.constant 0.5 : f32
  %k = fuser.constant 0.7071067811865476 : f32
  %hk = fuser.mul %h, %k : (!fuser.tensor<8x32xf32>, f32) -> !fuser.tensor<8x32xf32>
  %e = fuser.erf %hk : (!fuser.tensor<8x32xf32>) -> !fuser.tensor<8x32xf32>
  %one = fuser.constant 1.0 : f32
  %e1 = fuser.add %e, %one : (!fuser.tensor<8x32xf32>, f32) -> !fuser.tensor<8x32xf32>
  %hc = fuser.mul %h, %c : (!fuser.tensor<8x32xf32>, f32) -> !fuser.tensor<8x32xf32>
  %g = fuser.mul %hc, %e1 : (!fuser.tensor<8x32xf32>, !fuser.tensor<8x32xf32>) -> !fuser.tensor<8x32xf32>
  %y = fuser.linear %g, %w2, %b2 : (!fuser.tensor<8x32xf32>, !fuser.tensor<16x32xf32>, !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<MESH>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %w1 {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<32x16xf32>
  iterdomain.shard %b1 {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<32xf32>
  iterdomain.shard %w2 {sharding = #iterdomain.sharding<MESH, DIDx = 1>} : !fuser.tensor<16x32xf32>
  fuser.output %y : !fuser.tensor<8x16xf32>
}
"""

LAYER_NORM = """
fuser.fusion @layer_norm(%x: !fuser.tensor<16x32xf32>, %w: !fuser.tensor<32xf32>, %b: !fuser.tensor<32xf32>) -> !fuser.tensor<16x32xf32> {
  %var, %mean = fuser.var_mean %x {dims = array<i64: 1>, correction = 0.0 : f64} : (!fuser.tensor<16x32xf32>) -> (!fuser.tensor<16xf32>, !fuser.tensor<16xf32>)
  %mb = fuser.broadcast_in_dim %mean {shape = array<i64: 16, 32>, broadcast_dims = array<i64: 0>} : !fuser.tensor<16xf32> -> !fuser.tensor<16x32xf32>
  %xm = fuser.sub %x, %mb : (!fuser.tensor<16x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x32xf32>
  %eps = fuser.constant 1.0e-05 : f32
  %ve = fuser.add %var, %eps : (!fuser.tensor<16xf32>, f32) -> !fuser.tensor<16xf32>
  %r = fuser.rsqrt %ve : (!fuser.tensor<16xf32>) -> !fuser.tensor<16xf32>
  %rb = fuser.broadcast_in_dim %r {shape = array<i64: 16, 32>, broadcast_dims = array<i64: 0>} : !fuser.tensor<16xf32> -> !fuser.tensor<16x32xf32>
  %n = fuser.mul %xm, %rb : (!fuser.tensor<16x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x32xf32>
  %wb = fuser.broadcast_in_dim %w {shape = array<i64: 16, 32>, broadcast_dims = array<i64: 1>} : !fuser.tensor<32xf32> -> !fuser.tensor<16x32xf32>
  %bb = fuser.broadcast_in_dim %b {shape = array<i64: 16, 32>, broadcast_dims = array<i64: 1>} : !fuser.tensor<32xf32> -> !fuser.tensor<16x32xf32>
  %nw = fuser.mul %n, %wb : (!fuser.tensor<16x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x32xf32>
  %y = fuser.add %nw, %bb : (!fuser.tensor<16x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x32xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<16x32xf32>
  fuser.output %y : !fuser.tensor<16x32xf32>
}
"""

AG_MATMUL = """
fuser.fusion @agmm(%x: !fuser.tensor<32x16xf32>, %w: !fuser.tensor<24x16xf32>) -> (!fuser.tensor<32x24xf32>, !fuser.tensor<16xf32>, !fuser.tensor<32x16xf32>) {
  %xg = fuser.set %x : (!fuser.tensor<32x16xf32>) -> !fuser.tensor<32x16xf32>
  %y = fuser.linear %xg, %w : (!fuser.tensor<32x16xf32>, !fuser.tensor<24x16xf32>) -> !fuser.tensor<32x24xf32>
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<32x16xf32>) -> !fuser.tensor<16xf32>
  %e = fuser.exp %x : (!fuser.tensor<32x16xf32>) -> !fuser.tensor<32x16xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<32x16xf32>
  iterdomain.shard %xg {sharding = #iterdomain.sharding<MESH>} : !fuser.tensor<32x16xf32>
  iterdomain.shard %w {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<24x16xf32>
  iterdomain.shard %e {sharding = #iterdomain.sharding<MESH>} : !fuser.tensor<32x16xf32>
  fuser.output %y, %s, %e : !fuser.tensor<32x24xf32>, !fuser.tensor<16xf32>, !fuser.tensor<32x16xf32>
}
"""

MM_RS = """
fuser.fusion @mm_rs(%x: !fuser.tensor<8x16xf32>, %w: !fuser.tensor<12x16xf32>) -> !fuser.tensor<8x12xf32> {
  %y = fuser.linear %x, %w : (!fuser.tensor<8x16xf32>, !fuser.tensor<12x16xf32>) -> !fuser.tensor<8x12xf32>
  %ys = fuser.set %y : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8x12xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<MESH, DIDx = 1>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %w {sharding = #iterdomain.sharding<MESH, DIDx = 1>} : !fuser.tensor<12x16xf32>
  iterdomain.shard %ys {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<8x12xf32>
  fuser.output %ys : !fuser.tensor<8x12xf32>
}
"""
"""A row-parallel linear into a sequence-parallel output: the partial sums
reduce-scattered along the rows."""

CASES = {"mlp": MLP, "layer_norm": LAYER_NORM, "ag_matmul": AG_MATMUL, "mm_rs": MM_RS}


def _fusion(text: str, size: int) -> Any:
    from xdsl.parser import Parser

    from fuser.ir.context import make_context
    from fuser.ir.dialects import fuser as F

    module = Parser(make_context(), text.replace("MESH", str(list(range(size))))).parse_module()
    module.verify()
    return next(op for op in module.ops if isinstance(op, F.FusionOp))


def _full_inputs(fusion: Any, seed: int = 0) -> list[np.ndarray]:
    """Every rank's same global inputs (one seed: ``7 + seed``)."""
    from tests.test_schedule_fusions import random_inputs

    return random_inputs(fusion, 7 + seed)


def _strip(fusion: Any) -> Any:
    """The fusion without its shardings: what one device computes."""
    from fuser.ir.dialects import iterdomain as I

    plain = fusion.clone()
    for op in list(plain.body.block.ops):
        if isinstance(op, I.ShardOp):
            plain.body.block.erase_op(op)
    return plain


def _rank_fusions(rank: int, size: int, overlap: int | None) -> dict[str, Any]:
    """On each rank: every case's local outputs, its slice of the single-process
    result, and the communications its program ran."""
    from fuser.ir.dialects import hir as H
    from fuser.ir.reference import run_fusion
    from fuser.runtime.communicator import Communicator
    from fuser.runtime.multidevice import MultiDeviceFusion, shard_array

    comm = Communicator()
    out: dict[str, Any] = {}
    for name, text in CASES.items():
        fusion = _fusion(text, size)
        md = MultiDeviceFusion(
            fusion, overlap_chunks=overlap if name == "ag_matmul" else None,
            overlap_reduce_scatter=name == "mm_rs" and overlap is not None,
        )
        full = _full_inputs(fusion)
        got = md.run(md.shard_inputs(full, rank), comm)
        want = [shard_array(w, s, rank) for w, s in zip(run_fusion(_strip(fusion), full), md.output_shardings, strict=True)]
        program = md.executable(md.shard_inputs(full, rank)).module
        comms = sorted({op.name for op in program.walk() if isinstance(op, H.CommunicationOp)})
        out[name] = ([np.asarray(g) for g in got], want, comms)
    return out


def _rank_frontend(rank: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    from fuser import DeviceMesh, FusionDefinition, ParallelType
    from fuser.runtime.multidevice import shard_array

    class Mlp(FusionDefinition):
        def definition(self) -> None:
            self.x = self.define_tensor([-1, -1])
            self.w1 = self.define_tensor([-1, -1])
            self.w2 = self.define_tensor([-1, -1])
            h = self.ops.tanh(self.ops.linear(self.x, self.w1))
            self.add_output(self.ops.linear(h, self.w2))

        def multidevice_schedule(self) -> None:
            mesh = DeviceMesh(range(size))
            for t in (self.x, self.w1, self.w2):
                self.sched._set_device_mesh(t, mesh)
            self.sched.parallelize(self.w1, 0, ParallelType.mesh_x)
            self.sched.split(self.w2, 1, size, False)
            self.sched.parallelize(self.w2, 1, ParallelType.mesh_x)

    rng = np.random.default_rng(3)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((8, 16), (32, 16), (16, 32)))
    fd = Mlp()
    from fuser.ir.dialects.sharding import ShardingAttr

    local = [x, shard_array(w1, ShardingAttr(list(range(size)), 0), rank),
             shard_array(w2, ShardingAttr(list(range(size)), 1), rank)]
    (y,) = fd.execute(local)
    return np.asarray(y), np.tanh(x @ w1.T) @ w2.T


def _rank_dtensors(rank: int, size: int, device: str = "cpu") -> dict[str, Any]:
    """The MLP through ``FusionDefinitionWrapper`` on DTensors (gloo on the CPU; NCCL
    with ``device="cuda"``)."""
    import torch
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    from fuser.frontend.multidevice import FusionDefinitionWrapper

    del rank
    mesh = init_device_mesh(device, (size,))
    g = torch.Generator().manual_seed(5)
    x, w1, w2 = (torch.randn(*s, generator=g).to(device) for s in ((8, 16), (32, 16), (16, 32)))

    def define(fd: Any) -> None:
        tx, t1, t2 = (fd.define_tensor([-1, -1]) for _ in range(3))
        h = fd.ops.tanh(fd.ops.linear(tx, t1))
        fd.add_output(fd.ops.linear(h, t2))
        fd.add_output(h)

    ins = [distribute_tensor(x, mesh, [Replicate()]), distribute_tensor(w1, mesh, [Shard(0)]),
           distribute_tensor(w2, mesh, [Shard(1)])]
    wrapper = FusionDefinitionWrapper(define)
    y, h = wrapper(ins)
    y2, _ = wrapper(ins)  # the compiled fusion of these placements, again
    want_h = torch.tanh(x @ w1.T)
    return {
        "y": (y.full_tensor().cpu().numpy(), (want_h @ w2.T).cpu().numpy()),
        "y again": (y2.full_tensor().cpu().numpy(), (want_h @ w2.T).cpu().numpy()),
        "h": (h.full_tensor().cpu().numpy(), want_h.cpu().numpy()),
        "placements": ([repr(p) for p in y.placements], [repr(p) for p in h.placements]),
        "compiled": len(wrapper._cache),
        "local device": str(y.to_local().device),
    }


def test_dtensors_through_the_wrapper_on_two_cpu_ranks() -> None:
    for out in run_ranks(2, _rank_dtensors, timeout=240):
        for name in ("y", "y again", "h"):
            got, want = out[name]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
        assert out["placements"] == (["Replicate()"], ["Shard(dim=1)"])
        assert out["compiled"] == 1 and out["local device"] == "cpu"


@pytest.mark.parametrize(("size", "overlap"), [(2, None), (2, 1), (4, 2)])
def test_fusions_on_cpu_ranks_equal_one_process(size: int, overlap: int | None) -> None:
    results = run_ranks(size, _rank_fusions, overlap, timeout=240)
    for rank, cases in enumerate(results):
        for name, (got, want, comms) in cases.items():
            assert len(got) == len(want), name
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=f"{name} on rank {rank} of {size}")
            expected = {
                "mlp": ["hir.allreduce"],
                "layer_norm": [],
                "mm_rs": ["hir.recv", "hir.send"] if overlap else ["hir.reduce_scatter"],
                "ag_matmul": sorted(
                    {"hir.allreduce", "hir.allgather"} | ({"hir.send", "hir.recv"} if overlap else set())
                ),
            }[name]
            assert comms == expected, (name, comms)


def test_frontend_multidevice_execute_on_two_cpu_ranks() -> None:
    for got, want in run_ranks(2, _rank_frontend, timeout=240):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
