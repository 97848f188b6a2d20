"""nvFuser's multi-device frontend: ``multidevice_schedule()`` on a
``FusionDefinition`` subclass, ``DeviceMesh``, ``ParallelType.mesh_x``, and
``execute`` on each rank's shards (issue 17)::

    class Mlp(FusionDefinition):
        def definition(self):
            self.x = self.define_tensor([8, 16])
            self.w1 = self.define_tensor([32, 16])
            self.w2 = self.define_tensor([16, 32])
            h = self.ops.gelu(self.ops.linear(self.x, self.w1))
            self.add_output(self.ops.linear(h, self.w2))

        def multidevice_schedule(self):
            mesh = DeviceMesh(range(2))
            for t in (self.x, self.w1, self.w2):
                self.sched._set_device_mesh(t, mesh)
            self.sched.parallelize(self.w1, 0, ParallelType.mesh_x)  # column parallel
            self.sched.split(self.w2, 1, 2, False)                    # [32] -> [2, 16]
            self.sched.parallelize(self.w2, 1, ParallelType.mesh_x)   # row parallel

    # in every process of torchrun (or a gloo group on the CPU):
    (y,) = Mlp().execute([x, w1_shard, w2_shard])   # each rank's shards in, its shards out

``FusionDefinitionWrapper(define)(dtensors)`` is the DTensor entry point (nvFuser's
wrapper of the same name): the DTensors' meshes and placements are the declarations,
and the outputs come back as DTensors.

A tensor given a mesh without a ``mesh_x`` axis is replicated; tensors without a mesh
get their sharding by propagation. ``split(t, axis, d, inner_split=False)`` followed by
``parallelize(t, axis, mesh_x)`` shards logical ``axis`` over the ``d`` devices (as
nvFuser's outer split by the mesh size); ``parallelize`` alone does the same (the
axis's local extent is its extent divided by ``d``). The declarations become
``iterdomain.shard`` ops of the fusion, which ``fuser.runtime.multidevice`` compiles
per device. ``execute`` needs ``torch.distributed`` initialized (the communicator is
its default group): numpy arrays and CPU tensors run on the CPU over gloo, torch CUDA
tensors on the GPU over NCCL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from xdsl.ir import SSAValue

from fuser.frontend.device_mesh import DeviceMesh
from fuser.frontend.user_schedule import block_values
from fuser.ir.dialects import iterdomain as I
from fuser.ir.dialects.fuser import FusionOp, TensorType
from fuser.ir.dialects.sharding import ShardingAttr

if TYPE_CHECKING:
    from fuser.frontend.fusion_definition import FusionDefinition
    from fuser.runtime.multidevice import MultiDeviceFusion

__all__ = [
    "DeviceMesh",
    "FusionDefinitionWrapper",
    "MultiDeviceRecorder",
    "defines_multidevice_schedule",
    "execute",
]


class MultiDeviceRecorder:
    """What ``multidevice_schedule()`` declares, by tensor position."""

    def __init__(self) -> None:
        self.meshes: dict[int, DeviceMesh] = {}
        self.axes: dict[int, int] = {}
        self.splits: dict[int, tuple[int, int]] = {}

    def set_device_mesh(self, position: int, mesh: Any) -> None:
        if not isinstance(mesh, DeviceMesh):
            raise ValueError(f"fd.sched._set_device_mesh: {mesh!r} is not a DeviceMesh")
        self.meshes[position] = mesh

    def split(self, position: int, rank: int, dim: int, factor: int, inner_split: bool) -> None:
        if inner_split:
            raise NotImplementedError(
                "fd.sched.split in multidevice_schedule: only an outer split by the mesh size "
                "(inner_split=False) shards an axis"
            )
        self.splits[position] = (_axis("fd.sched.split", dim, rank), factor)

    def parallelize(self, position: int, rank: int, axis: int) -> None:
        mesh = self.meshes.get(position)
        if mesh is None:
            raise ValueError("fd.sched.parallelize(..., mesh_x): give the tensor a mesh first (_set_device_mesh)")
        split = self.splits.get(position)
        if split is not None:
            d, factor = split
            if _axis("fd.sched.parallelize", axis, rank + 1) != d:
                raise NotImplementedError(
                    f"fd.sched.parallelize: after an outer split of axis {d}, only the outer axis {d} "
                    f"is a device axis; got axis {axis}"
                )
            if factor != mesh.size:
                raise ValueError(
                    f"fd.sched.split: the outer split factor {factor} must be the mesh size {mesh.size}"
                )
        else:
            d = _axis("fd.sched.parallelize", axis, rank)
        if self.axes.get(position, d) != d:
            raise ValueError(
                f"fd.sched.parallelize: the tensor's device axis is already {self.axes[position]}; a "
                "one-dimensional mesh shards one axis"
            )
        self.axes[position] = d

    def shardings(self) -> dict[int, ShardingAttr]:
        return {p: ShardingAttr(m.devices, self.axes.get(p)) for p, m in self.meshes.items()}


def _axis(call: str, axis: int, rank: int) -> int:
    """``axis`` of a rank-``rank`` tensor, from the end when negative; a ValueError
    naming ``call`` when out of range."""
    if not -rank <= axis < rank:
        raise ValueError(f"{call}: axis {axis} is out of range for a rank-{rank} tensor")
    return axis % rank


def defines_multidevice_schedule(fd: FusionDefinition) -> bool:
    """Whether ``fd``'s class defines nvFuser's ``multidevice_schedule`` hook."""
    return callable(getattr(fd, "multidevice_schedule", None))


def _sharded(fusion: FusionOp, declarations: Iterable[tuple[SSAValue, ShardingAttr]]) -> MultiDeviceFusion:
    """``fusion`` with an ``iterdomain.shard`` per declaration, verified and wrapped."""
    from fuser.runtime.multidevice import MultiDeviceFusion

    for v, s in declarations:
        fusion.body.block.insert_op_before(I.ShardOp(v, s), fusion.output_op)
    fusion.verify()
    return MultiDeviceFusion(fusion)


def build(fd: FusionDefinition) -> MultiDeviceFusion:
    """Run ``fd.multidevice_schedule()`` and make the sharded fusion."""
    fusion = fd.fusion().clone()
    recorder = MultiDeviceRecorder()
    fd.sched._multidevice = recorder  # noqa: SLF001
    try:
        fd.multidevice_schedule()  # type: ignore[attr-defined]
    finally:
        fd.sched._multidevice = None  # noqa: SLF001
    shardings = recorder.shardings()
    if not shardings:
        raise ValueError("multidevice_schedule: no tensor was given a device mesh (fd.sched._set_device_mesh)")
    values = block_values(fusion.body.block)  # the positions fd.sched names tensors by
    return _sharded(fusion, ((values[p], s) for p, s in sorted(shardings.items())))


def execute(fd: FusionDefinition, inputs: Sequence[Any], communicator: Any = None) -> list[Any]:
    """``fd.execute`` of a definition with ``multidevice_schedule``: this rank's shards
    in, its output shards out."""
    md = fd.__dict__.get("_multidevice_fusion")
    if md is None:
        md = build(fd)
        fd.__dict__["_multidevice_fusion"] = md
    if communicator is None:
        from fuser.runtime.communicator import Communicator

        communicator = Communicator()
    return md.run(list(inputs), communicator)


class FusionDefinitionWrapper:
    """nvFuser's ``FusionDefinitionWrapper``: a single-device definition run on DTensors.

    ::

        def define(fd):
            x = fd.define_tensor([-1, -1])
            w = fd.define_tensor([-1, -1])
            fd.add_output(fd.ops.linear(x, w))

        out = FusionDefinitionWrapper(define)([x_dtensor, w_dtensor])   # DTensors

    Each input's mesh and placement (``Shard(d)`` or ``Replicate()`` on a
    one-dimensional ``DeviceMesh`` whose ranks are the world's, in order) become its
    ``iterdomain.shard`` declaration; propagation decides the rest, and each output
    comes back as a DTensor with the placement its sharding says. One compiled
    ``MultiDeviceFusion`` is kept per mesh and placements of the inputs."""

    def __init__(self, define_fusion: Any) -> None:
        self.define_fusion = define_fusion
        self._cache: dict[tuple[Any, ...], MultiDeviceFusion] = {}

    def __call__(self, in_dtensors: Sequence[Any], communicator: Any = None) -> list[Any]:
        from torch.distributed.tensor import DTensor

        for i, dt in enumerate(in_dtensors):
            if not isinstance(dt, DTensor):
                raise ValueError(f"input #{i}: expected a DTensor, got {type(dt).__name__}")
        shardings = [_sharding_of(dt, i) for i, dt in enumerate(in_dtensors)]
        key = tuple((str(s), tuple(dt.shape), str(dt.dtype)) for s, dt in zip(shardings, in_dtensors, strict=True))
        md = self._cache.get(key)
        if md is None:
            md = self._cache[key] = self._build(shardings)
        if communicator is None:
            from fuser.runtime.communicator import Communicator

            communicator = Communicator()
        outs = md.run([dt.to_local() for dt in in_dtensors], communicator)
        mesh = in_dtensors[0].device_mesh
        return [_as_dtensor(o, s, mesh) for o, s in zip(outs, md.output_shardings, strict=True)]

    def _build(self, shardings: list[ShardingAttr]) -> MultiDeviceFusion:
        from fuser.frontend.cache import FusionCache

        with FusionCache.definition()() as fd:  # FusionDefinition (a layer above)
            self.define_fusion(fd)
        fusion = fd.fusion().clone()
        block = fusion.body.block
        tensors = [a for a in block.args if isinstance(a.type, TensorType)]
        if len(tensors) != len(shardings):
            raise ValueError(f"the definition takes {len(tensors)} tensors, got {len(shardings)} DTensors")
        for i, (a, s) in enumerate(zip(tensors, shardings, strict=True)):
            assert isinstance(a.type, TensorType)
            if s.axis is not None and s.axis >= a.type.rank:
                raise ValueError(f"input #{i}: Shard({s.axis}) of a rank-{a.type.rank} tensor")
        return _sharded(fusion, zip(tensors, shardings, strict=True))


def _sharding_of(dt: Any, i: int) -> ShardingAttr:
    """A DTensor's placement as a sharding (1-D meshes, Shard or Replicate)."""
    mesh = dt.device_mesh
    if mesh.ndim != 1 or len(dt.placements) != 1:
        raise ValueError(f"input #{i}: only one-dimensional device meshes are supported, got {mesh}")
    devices = [int(r) for r in mesh.mesh.flatten().tolist()]
    placement = dt.placements[0]
    if placement.is_shard():
        return ShardingAttr(devices, placement.dim % dt.ndim)
    if placement.is_replicate():
        return ShardingAttr(devices)
    raise ValueError(f"input #{i}: placement {placement} is not supported (Shard or Replicate)")


def _as_dtensor(local: Any, sharding: ShardingAttr, mesh: Any) -> Any:
    import torch
    from torch.distributed.tensor import DTensor, Replicate, Shard

    if not isinstance(local, torch.Tensor):
        from fuser.runtime.torch_arrays import numpy_to_torch

        local = numpy_to_torch(local)
    placement = Replicate() if sharding.axis is None else Shard(sharding.axis)
    shape = torch.Size(sharding.global_shape(list(local.shape)))
    stride = torch.empty(shape, device="meta").stride()
    return DTensor.from_local(local, mesh, [placement], run_check=False, shape=shape, stride=stride)
