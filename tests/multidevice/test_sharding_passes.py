"""The multi-device passes in one process: sharding propagation keeps what the fusion
means (differential, through the reference interpreter), the localized fusion is what
each device computes (simulated rank by rank with numpy), conflicts are diagnostics,
and the frontend's ``multidevice_schedule`` declares what nvFuser's does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from fuser.ir.context import make_context
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.reference import run_fusion
from fuser.passes import all_passes
from fuser.runtime.driver import CompileError
from fuser.runtime.multidevice import MultiDeviceFusion, shard_array
from tests.test_schedule_fusions import random_inputs

LIT = Path(__file__).parents[1] / "filecheck" / "multidevice"


def _fusions(text: str) -> list[F.FusionOp]:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return [op for op in module.ops if isinstance(op, F.FusionOp)]


def _chunks(path: Path) -> list[str]:
    return [c for c in path.read_text().split("// -----") if "fuser.fusion" in c]


def _apply(fusion: F.FusionOp, spec: str) -> F.FusionOp:
    clone = fusion.clone()
    module = ModuleOp([clone])
    PassPipeline.parse_spec(all_passes(), spec).apply(make_context(), module)
    module.verify()
    return clone


CASES = [(p.name, i, c) for p in (LIT / "propagate-shardings.mlir", LIT / "localize-shardings.mlir")
         for i, c in enumerate(_chunks(p))]


@pytest.mark.parametrize(("name", "index", "text"), CASES, ids=[f"{n}-{i}" for n, i, _ in CASES])
def test_propagation_keeps_the_meaning(name: str, index: int, text: str) -> None:
    """Differential: random inputs through the reference before and after the pass."""
    del name, index
    for fusion in _fusions(text):
        after = _apply(fusion, "propagate-shardings")
        for seed in range(3):
            xs = random_inputs(fusion, seed)
            want = run_fusion(fusion, xs)
            got = run_fusion(after, xs)
            for w, g in zip(want, got, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _simulate(md: MultiDeviceFusion, full: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Every device's outputs, computed rank by rank: the local fusion's segments
    between communications, the communications done with numpy over all ranks."""
    fusion = md.local_fusion
    d = md.mesh.size
    envs = [dict(zip(fusion.body.block.args, md.shard_inputs(full, r), strict=True)) for r in range(d)]
    for op in fusion.body.block.ops:
        if isinstance(op, F.OutputOp):
            break
        if isinstance(op, F.ReshardOp):
            xs = [env[op.input] for env in envs]
            if op.kind == "allreduce":
                outs = [np.sum(xs, axis=0).astype(xs[0].dtype)] * d
            elif op.kind == "allgather":
                outs = [np.concatenate(xs, axis=op.src.axis)] * d
            elif op.kind == "reduce_scatter":
                total = np.sum(xs, axis=0).astype(xs[0].dtype)
                outs = [shard_array(total, op.dst, r) for r in range(d)]
            else:
                outs = [shard_array(xs[r], op.dst, r) for r in range(d)]
            for env, o in zip(envs, outs, strict=True):
                env[op.result] = o
            continue
        from fuser.ir.reference import evaluate_op

        for env in envs:
            for r, v in zip(op.results, evaluate_op(op, [env[x] for x in op.operands]), strict=True):
                env[r] = v
    return [[env[v] for v in fusion.output_op.values] for env in envs]


MLP = """
fuser.fusion @mlp(%x: !fuser.tensor<8x16xf32>, %w1: !fuser.tensor<32x16xf32>, %b1: !fuser.tensor<32xf32>,
                  %w2: !fuser.tensor<16x32xf32>, %b2: !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32> {
  %h = fuser.linear %x, %w1, %b1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<32x16xf32>, !fuser.tensor<32xf32>) -> !fuser.tensor<8x32xf32>
  %g = fuser.tanh %h : (!fuser.tensor<8x32xf32>) -> !fuser.tensor<8x32xf32>
  %y = fuser.linear %g, %w2, %b2 : (!fuser.tensor<8x32xf32>, !fuser.tensor<16x32xf32>, !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %w1 {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<32x16xf32>
  iterdomain.shard %b1 {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<32xf32>
  iterdomain.shard %w2 {sharding = #iterdomain.sharding<MESH, DIDx = 1>} : !fuser.tensor<16x32xf32>
  fuser.output %y : !fuser.tensor<8x16xf32>
}
"""


@pytest.mark.parametrize("d", [2, 4])
def test_tensor_parallel_mlp_simulated(d: int) -> None:
    """Each device's local fusion, with numpy collectives between them, gives the
    single-device result on every device (replicated output)."""
    (fusion,) = _fusions(MLP.replace("MESH", str(list(range(d)))))
    md = MultiDeviceFusion(fusion)
    full = random_inputs(fusion, 0)
    (want,) = run_fusion(fusion, full)
    for outs in _simulate(md, full):
        np.testing.assert_allclose(outs[0], want, rtol=1e-5, atol=1e-5)
    program = md.executable(md.shard_inputs(full, 0)).module
    kinds = [op.name for op in program.walk() if isinstance(op, H.CommunicationOp)]
    assert kinds == ["hir.allreduce"]


def test_frontend_multidevice_schedule_declares_shardings() -> None:
    from fuser import DeviceMesh, FusionDefinition, ParallelType
    from fuser.frontend.multidevice import build

    class Mlp(FusionDefinition):
        def definition(self) -> None:
            self.x = self.define_tensor([8, 16])
            self.w1 = self.define_tensor([32, 16])
            self.w2 = self.define_tensor([16, 32])
            h = self.ops.tanh(self.ops.linear(self.x, self.w1))
            self.add_output(self.ops.linear(h, self.w2))

        def multidevice_schedule(self) -> None:
            mesh = DeviceMesh(range(2))
            for t in (self.x, self.w1, self.w2):
                self.sched._set_device_mesh(t, mesh)
            self.sched.parallelize(self.w1, 0, ParallelType.mesh_x)
            self.sched.split(self.w2, 1, 2, False)
            self.sched.parallelize(self.w2, 1, ParallelType.mesh_x)

    md = build(Mlp())
    assert [str(s) for s in md.input_shardings] == [
        "#iterdomain.sharding<[0, 1]>",
        "#iterdomain.sharding<[0, 1], DIDx = 0>",
        "#iterdomain.sharding<[0, 1], DIDx = 1>",
    ]
    local = md.local_fusion
    assert [t.get_shape() for t in local.function_type.inputs.data] == [(8, 16), (16, 16), (16, 16)]
    rng = np.random.default_rng(1)
    full = [rng.standard_normal(s).astype(np.float32) for s in ((8, 16), (32, 16), (16, 32))]
    want = full[0] @ full[1].T
    want = np.tanh(want) @ full[2].T
    for outs in _simulate(md, full):
        np.testing.assert_allclose(outs[0], want, rtol=1e-4, atol=1e-5)


def test_frontend_mesh_x_outside_multidevice_schedule_is_an_error() -> None:
    from fuser import FusionDefinition, ParallelType

    with FusionDefinition() as fd:
        t = fd.define_tensor([4])
        fd.add_output(fd.ops.neg(t))
    with pytest.raises(RuntimeError, match="only inside multidevice_schedule"):
        fd.sched._set_device_mesh(t, None)
    with pytest.raises(ValueError, match="mesh_x \\(a device axis\\) only in multidevice_schedule"):
        fd.sched.parallelize(t, 0, ParallelType.mesh_x)


def test_frontend_multidevice_schedule_errors() -> None:
    from fuser import DeviceMesh, FusionDefinition, ParallelType
    from fuser.frontend.multidevice import build

    def definition(schedule: object) -> FusionDefinition:
        class Fd(FusionDefinition):
            def definition(self) -> None:
                self.x = self.define_tensor([8, 4])
                self.add_output(self.ops.neg(self.x))

            def multidevice_schedule(self) -> None:
                schedule(self)  # type: ignore[operator]

        return Fd()

    def out_of_range(fd: object) -> None:
        fd.sched._set_device_mesh(fd.x, DeviceMesh([0, 1]))  # type: ignore[attr-defined]
        fd.sched.parallelize(fd.x, 2, ParallelType.mesh_x)  # type: ignore[attr-defined]

    def two_axes(fd: object) -> None:
        fd.sched._set_device_mesh(fd.x, DeviceMesh([0, 1]))  # type: ignore[attr-defined]
        fd.sched.parallelize(fd.x, 0, ParallelType.mesh_x)  # type: ignore[attr-defined]
        fd.sched.parallelize(fd.x, 1, ParallelType.mesh_x)  # type: ignore[attr-defined]

    def wrong_factor(fd: object) -> None:
        fd.sched._set_device_mesh(fd.x, DeviceMesh([0, 1]))  # type: ignore[attr-defined]
        fd.sched.split(fd.x, 0, 4, False)  # type: ignore[attr-defined]
        fd.sched.parallelize(fd.x, 0, ParallelType.mesh_x)  # type: ignore[attr-defined]

    def no_mesh(fd: object) -> None:
        fd.sched.parallelize(fd.x, 0, ParallelType.mesh_x)  # type: ignore[attr-defined]

    cases = [
        (out_of_range, "axis 2 is out of range for a rank-2 tensor"),
        (two_axes, "the tensor's device axis is already 0"),
        (wrong_factor, "the outer split factor 4 must be the mesh size 2"),
        (no_mesh, "give the tensor a mesh first"),
    ]
    for schedule, message in cases:
        with pytest.raises(ValueError, match=message):
            build(definition(schedule))

    fd = definition(lambda fd: fd.sched._set_device_mesh(fd.x, DeviceMesh([0, 1])))  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="profile is not supported for a definition with multidevice_schedule"):
        fd.execute([np.zeros((8, 4), np.float32)], profile=True)


def test_wrapper_takes_only_dtensors() -> None:
    from fuser.frontend.multidevice import FusionDefinitionWrapper

    def define(fd: object) -> None:
        fd.add_output(fd.ops.neg(fd.define_tensor([-1])))  # type: ignore[attr-defined]

    with pytest.raises(ValueError, match="input #0: expected a DTensor, got ndarray"):
        FusionDefinitionWrapper(define)([np.zeros(4, np.float32)])


def test_conflicting_shardings_fail_before_running() -> None:
    text = """
    fuser.fusion @f(%a: !fuser.tensor<8x8xf32>, %b: !fuser.tensor<8x8xf32>) -> !fuser.tensor<8x8xf32> {
      %c = fuser.add %a, %b : (!fuser.tensor<8x8xf32>, !fuser.tensor<8x8xf32>) -> !fuser.tensor<8x8xf32>
      iterdomain.shard %a {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x8xf32>
      iterdomain.shard %b {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<8x8xf32>
      fuser.output %c : !fuser.tensor<8x8xf32>
    }"""
    (fusion,) = _fusions(text)
    md = MultiDeviceFusion(fusion)
    with pytest.raises(CompileError, match="fuser.add: operand #0 is sharded on axis 0 but operand #1 on axis 1"):
        md.run([np.zeros((4, 8), np.float32), np.zeros((8, 4), np.float32)], communicator=_World(2))


class _World:
    """A communicator stand-in for checks that fail before any communication."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.rank = 0


def test_mesh_larger_than_the_world_fails_before_running() -> None:
    (fusion,) = _fusions(MLP.replace("MESH", "[0, 1, 2, 3]"))
    md = MultiDeviceFusion(fusion)
    local = md.shard_inputs(random_inputs(fusion, 0), 0)
    with pytest.raises(ValueError, match=r"mesh \[0, 1, 2, 3\] needs 4 processes; the world has 2"):
        md.run(local, communicator=_World(2))


def test_wrong_shard_shape_names_the_input() -> None:
    (fusion,) = _fusions(MLP.replace("MESH", "[0, 1]"))
    md = MultiDeviceFusion(fusion)
    full = random_inputs(fusion, 0)  # global shapes, not this rank's shards
    with pytest.raises(ValueError, match=r"input #1: expected this rank's shard of shape \[16, 16\]"):
        md.run(full, communicator=_World(2))
