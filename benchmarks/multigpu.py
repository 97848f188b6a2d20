"""Multi-GPU fusions: correctness against one GPU, and the overlapped allgather + GEMM
against the gather-then-multiply program (issue 17).

    torchrun --nproc-per-node 2 benchmarks/multigpu.py [--json FILE] [--quick]

Every rank builds the same full inputs (one seed), runs its shards through fuser
(``multidevice_schedule`` definitions: NCCL through torch.distributed), and compares
its output shard with the same slice of the single-GPU result (fuser's own, on the
full inputs, on this rank's GPU). Cases:

* ``tp_mlp``: tensor-parallel MLP, ``linear(gelu(linear(x, w1, b1)), w2, b2)``, w1/b1
  column-sharded, w2 row-sharded (an allreduce of the partial sums), bf16.
* ``sp_layer_norm``: sequence-parallel layer norm (rows sharded; no communication).
* ``mm_rs``: a row-parallel linear (``x`` and ``w`` sharded on the contracted axis)
  whose output is sequence-parallel (rows sharded): the GEMM, then a reduce-scatter of
  the partial sums, against ``overlap-matmul-reduce-scatter``'s ring (each chunk's
  partial sums sent on while the next chunk is multiplied), and torch's ``mm`` +
  ``reduce_scatter_tensor``.
* ``ag_matmul``: sequence-parallel input gathered into a column-parallel linear
  (``x`` rows sharded, ``w`` rows sharded): gather then multiply, and the overlapped
  stream loops (``overlap-allgather-matmul{chunks=c}``) for several ``c``, at two
  sizes; torch's own ``all_gather_into_tensor`` + ``mm`` and a hand-written torch
  overlap (send/recv on a side stream, queued before the GEMM) as anchors. Times are
  the median of CUDA events over 20 runs after a barrier (host and device: the events
  are recorded around the call), the slowest rank's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _gelu_tanh(fd: Any, h: Any) -> Any:
    inner = fd.ops.mul(fd.ops.add(h, fd.ops.mul(fd.ops.mul(fd.ops.mul(h, h), h), 0.044715)), 0.7978845608028654)
    return fd.ops.mul(fd.ops.mul(h, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))


def definitions(d: int) -> dict[str, Any]:
    """name -> (FusionDefinition class factory)."""
    from fuser import DataType, DeviceMesh, FusionDefinition, ParallelType

    bf16 = DataType.BFloat16

    class TpMlp(FusionDefinition):
        def definition(self) -> None:
            self.x = self.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            self.w1 = self.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            self.b1 = self.define_tensor([-1], contiguity=[True], dtype=bf16)
            self.w2 = self.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            self.b2 = self.define_tensor([-1], contiguity=[True], dtype=bf16)
            h = self.ops.cast(self.ops.linear(self.x, self.w1, self.b1), DataType.Float)
            g = self.ops.cast(_gelu_tanh(self, h), bf16)
            self.add_output(self.ops.linear(g, self.w2, self.b2))

        def multidevice_schedule(self) -> None:
            mesh = DeviceMesh(range(d))
            for t in (self.x, self.w1, self.b1, self.w2, self.b2):
                self.sched._set_device_mesh(t, mesh)
            self.sched.parallelize(self.w1, 0, ParallelType.mesh_x)
            self.sched.parallelize(self.b1, 0, ParallelType.mesh_x)
            self.sched.split(self.w2, 1, d, False)
            self.sched.parallelize(self.w2, 1, ParallelType.mesh_x)

    class SpLayerNorm(FusionDefinition):
        def definition(self) -> None:
            self.x = self.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            self.w = self.define_tensor([-1], contiguity=[True], dtype=bf16)
            self.b = self.define_tensor([-1], contiguity=[True], dtype=bf16)
            x = self.ops.cast(self.x, DataType.Float)
            var, mean = self.ops.var_mean(x, [1], correction=0, keepdim=False)
            xm = self.ops.sub(x, self.ops.broadcast(mean, [False, True]))
            rstd = self.ops.rsqrt(self.ops.add(var, 1e-5))
            y = self.ops.mul(xm, self.ops.broadcast(rstd, [False, True]))
            y = self.ops.add(self.ops.mul(y, self.ops.broadcast(self.ops.cast(self.w, DataType.Float), [True, False])),
                             self.ops.broadcast(self.ops.cast(self.b, DataType.Float), [True, False]))
            self.add_output(self.ops.cast(y, bf16))

        def multidevice_schedule(self) -> None:
            mesh = DeviceMesh(range(d))
            self.sched._set_device_mesh(self.x, mesh)
            self.sched.parallelize(self.x, 0, ParallelType.mesh_x)

    class AgMatmul(FusionDefinition):
        def definition(self) -> None:
            self.x = self.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            self.w = self.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            self.xg = self.ops.set(self.x)
            self.add_output(self.ops.linear(self.xg, self.w))

        def multidevice_schedule(self) -> None:
            mesh = DeviceMesh(range(d))
            for t in (self.x, self.xg, self.w):
                self.sched._set_device_mesh(t, mesh)
            self.sched.parallelize(self.x, 0, ParallelType.mesh_x)
            self.sched.parallelize(self.w, 0, ParallelType.mesh_x)

    class MatmulRs(FusionDefinition):
        def definition(self) -> None:
            self.x = self.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            self.w = self.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            self.y = self.ops.set(self.ops.linear(self.x, self.w))
            self.add_output(self.y)

        def multidevice_schedule(self) -> None:
            mesh = DeviceMesh(range(d))
            for t in (self.x, self.w, self.y):
                self.sched._set_device_mesh(t, mesh)
            for t in (self.x, self.w):  # the contracted axis sharded: partial sums
                self.sched.split(t, 1, d, False)
                self.sched.parallelize(t, 1, ParallelType.mesh_x)
            self.sched.parallelize(self.y, 0, ParallelType.mesh_x)  # rows: a reduce-scatter

    return {"tp_mlp": TpMlp, "sp_layer_norm": SpLayerNorm, "ag_matmul": AgMatmul, "mm_rs": MatmulRs}


def _time(fn: Any, runs: int) -> float:
    import torch
    import torch.distributed as dist

    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        dist.barrier()
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    med = torch.tensor([statistics.median(times)], device="cuda")
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    return round(float(med.item()), 1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", default="")
    parser.add_argument("--quick", action="store_true", help="small shapes")
    args = parser.parse_args()

    import torch
    import torch.distributed as dist

    from fuser.frontend.multidevice import build
    from fuser.runtime.communicator import Communicator
    from fuser.runtime.multidevice import MultiDeviceFusion, shard_array

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    comm = Communicator.init_from_env()
    rank, d = comm.rank, comm.size
    defs = definitions(d)
    rows: list[dict[str, Any]] = []
    gen = torch.Generator(device="cuda").manual_seed(0)

    def randn(*shape: int, scale: float = 1.0) -> Any:
        return (torch.randn(*shape, generator=gen, device="cuda", dtype=torch.float32) * scale).to(torch.bfloat16)

    def check(name: str, md: MultiDeviceFusion, full: list[Any], extra: dict[str, Any]) -> None:
        local = md.shard_inputs(full, rank)
        outs = md.run(local, comm)
        single = _single_gpu(md, full)
        err = 0.0
        for o, ref, s in zip(outs, single, md.output_shardings, strict=True):
            want = shard_array(ref, s, md.mesh.position(rank))
            err = max(err, float((o.float() - want.float()).abs().max() / want.float().abs().max().clamp(min=1e-6)))
        t = torch.tensor([err], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        us = _time(lambda: md.run(local, comm), 20)
        rows.append({"case": name, "devices": d, "fuser_us": us, "rel_err_vs_single_gpu": round(float(t.item()), 5),
                     **extra})

    m, h = (1024, 1024) if args.quick else (8192, 4096)
    full = [randn(m, h), randn(4 * h, h, scale=h**-0.5), randn(4 * h), randn(h, 4 * h, scale=(4 * h) ** -0.5),
            randn(h)]
    check("tp_mlp", build(defs["tp_mlp"]()), full, {"shape": f"x {m}x{h}, hidden {4 * h}"})
    full = [randn(m, h), randn(h), randn(h)]
    check("sp_layer_norm", build(defs["sp_layer_norm"]()), full, {"shape": f"{m}x{h}"})

    shapes = [(2048, 1024, 1024)] if args.quick else [(32768, 8192, 8192), (65536, 8192, 8192)]
    base = build(defs["ag_matmul"]())
    for mm, k, n in shapes:
        x, w = randn(mm, k), randn(n, k, scale=k**-0.5)
        shape = f"x {mm}x{k}, w {n}x{k}"
        for chunks in (None, 1, 2):
            md = MultiDeviceFusion(base.fusion, overlap_chunks=chunks)
            name = "ag_matmul" if chunks is None else f"ag_matmul_overlap{chunks}"
            check(name, md, [x, w], {"shape": shape})
        rows += _torch_anchors(x, w, base, rank, d, shape)
        del x, w
    rs = build(defs["mm_rs"]())
    for mm, k, n in shapes:
        x, w = randn(mm, k), randn(n, k, scale=k**-0.5)
        shape = f"x {mm}x{k}, w {n}x{k}"
        for ring in (False, True):
            md = MultiDeviceFusion(rs.fusion, overlap_reduce_scatter=ring)
            check("mm_rs_overlap" if ring else "mm_rs", md, [x, w], {"shape": shape})
        rows += _torch_rs_anchor(x, w, rs, rank, d, shape)
        del x, w
    if rank == 0:
        for r in rows:
            print(json.dumps(r), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
    dist.barrier()
    dist.destroy_process_group()
    return 0


def _torch_anchors(x: Any, w: Any, base: Any, rank: int, d: int, shape: str) -> list[dict[str, Any]]:
    """torch on the same shards: ``all_gather_into_tensor`` then ``linear``, and the
    hand-written overlap (the peer's rows over NCCL send/recv on a side stream,
    queued first; this rank's rows multiplied meanwhile; then the peer's)."""
    import torch
    import torch.distributed as dist

    from fuser.runtime.multidevice import shard_array

    xl = shard_array(x, base.input_shardings[0], rank)
    wl = shard_array(w, base.input_shardings[1], rank)
    m = xl.shape[0]
    gathered = torch.empty(x.shape, device="cuda", dtype=x.dtype)
    out = torch.empty(x.shape[0], wl.shape[0], device="cuda", dtype=x.dtype)
    side = torch.cuda.Stream()

    def plain() -> None:
        dist.all_gather_into_tensor(gathered, xl)
        torch.mm(gathered, wl.t(), out=out)

    def overlapped() -> None:
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            ops = []
            for k in range(1, d):
                ops += [dist.P2POp(dist.isend, xl, (rank - k) % d),
                        dist.P2POp(dist.irecv, gathered[(rank + k) % d * m:][:m], (rank + k) % d)]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
        torch.mm(xl, wl.t(), out=out[rank * m:][:m])
        torch.cuda.current_stream().wait_stream(side)
        for k in range(1, d):
            p = (rank + k) % d
            torch.mm(gathered[p * m:][:m], wl.t(), out=out[p * m:][:m])

    return [
        {"case": "ag_matmul_torch", "devices": d, "torch_us": _time(plain, 20), "shape": shape},
        {"case": "ag_matmul_torch_overlap", "devices": d, "torch_us": _time(overlapped, 20), "shape": shape},
    ]


def _torch_rs_anchor(x: Any, w: Any, rs: Any, rank: int, d: int, shape: str) -> list[dict[str, Any]]:
    """torch on the same shards: ``mm`` of the local slices, then
    ``reduce_scatter_tensor`` of the partial sums."""
    import torch
    import torch.distributed as dist

    from fuser.runtime.multidevice import shard_array

    xl = shard_array(x, rs.input_shardings[0], rank)
    wl = shard_array(w, rs.input_shardings[1], rank)
    partial = torch.empty(x.shape[0], w.shape[0], device="cuda", dtype=x.dtype)
    out = torch.empty(x.shape[0] // d, w.shape[0], device="cuda", dtype=x.dtype)

    def plain() -> None:
        torch.mm(xl, wl.t(), out=partial)
        dist.reduce_scatter_tensor(out, partial)

    return [{"case": "mm_rs_torch", "devices": d, "torch_us": _time(plain, 20), "shape": shape}]


def _single_gpu(md: Any, full: list[Any]) -> list[Any]:
    """The fusion without its shardings, on this rank's GPU (fuser's generated
    kernels and cuBLAS), on the full inputs."""
    from xdsl.dialects.builtin import ModuleOp

    from fuser.frontend.fusion_definition import FusionDefinition
    from fuser.ir.dialects import iterdomain as I

    fusion = md.fusion.clone()
    for op in list(fusion.body.block.ops):
        if isinstance(op, I.ShardOp):
            fusion.body.block.erase_op(op)
    fd = FusionDefinition.from_mlir(str(ModuleOp([fusion])))
    return fd.execute(full)


if __name__ == "__main__":
    raise SystemExit(main())
