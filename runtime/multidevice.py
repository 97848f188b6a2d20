"""Multi-device execution: a sharded fusion compiled for, and run by, every device of
its mesh (nvFuser's ``MultiDeviceExecutor``; issue 17).

One process runs per device (``torchrun``, or ``tests/multidevice/harness.py`` on the
CPU); every process compiles the same fusion and runs the same host program on its
own shards, and the program's ``hir`` communications meet across the processes
through a ``fuser.runtime.communicator.Communicator`` (NCCL between GPUs, gloo
between CPU processes)::

    md = MultiDeviceFusion(fusion)             # iterdomain.shard declarations in it
    comm = Communicator()                      # torch.distributed's default group
    local = md.shard_inputs(full_inputs, comm.rank)   # or each rank's own shards
    outs = md.run(local, comm)                 # this rank's outputs (local shards)
    md.local_fusion                            # what each device computes
    md.executable(local).module                # its host program: launches, collectives

The pipeline: ``propagate-shardings``, ``localize-shardings`` on the fusion, then the
driver's (``fuser.runtime.driver``) on the local fusion with ``lower-communications``
after ``segment`` (and the overlap passes when asked for)::

    canonicalize, strip-bookend-views, mark-aliases, segment, lower-communications,
    [overlap-allgather-matmul{chunks=N},] [overlap-matmul-reduce-scatter,]
    select-schedulers{debug=true}, schedule-fusions

On the CPU every launch runs the reference interpreter; on the GPU (torch CUDA
inputs) the generated kernels and cuBLAS, the program on a stream of its own (after
the caller's work, before the caller's later work) and each communication on the
program's current stream. Conflicting shardings, a mesh larger than the world (one
process per device) and inputs that are not this rank's shard are errors before
anything runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.sharding import DeviceMeshAttr, ShardingAttr
from fuser.ir.shapes import DYN
from fuser.runtime.driver import CompileError, Executable, compile
from fuser.runtime.signature import Signature

__all__ = ["MULTIDEVICE_PASSES", "MultiDeviceFusion", "shard_array"]

MULTIDEVICE_PASSES: tuple[str, ...] = (
    "canonicalize",
    "strip-bookend-views",
    "mark-aliases",
    "segment",
    "lower-communications",
    "select-schedulers{debug=true}",
    "schedule-fusions",
)
"""The driver's pipeline on a localized fusion: ``lower-communications`` after
``segment``."""


def shard_array(x: Any, sharding: ShardingAttr, position: int) -> Any:
    """The part of ``x`` (numpy array or torch tensor, the global value) that the
    device at mesh ``position`` holds under ``sharding`` (contiguous)."""
    a = sharding.axis
    if a is None:
        return x
    n = x.shape[a]
    if n % sharding.size:
        raise ValueError(f"axis {a} of shape {list(x.shape)} is not divisible by the {sharding.size} devices")
    c = n // sharding.size
    index = (slice(None),) * a + (slice(position * c, (position + 1) * c),)
    part = x[index]
    return part.contiguous() if hasattr(part, "contiguous") else part.copy()


@dataclass
class MultiDeviceFusion:
    """A fusion with ``iterdomain.shard`` declarations, compiled per device (module
    docstring). ``overlap_chunks``: run ``overlap-allgather-matmul{chunks=N}`` (None:
    gather, then multiply). ``overlap_reduce_scatter``: run
    ``overlap-matmul-reduce-scatter`` (off by default: on 2 H100s its ring is slower
    than multiplying, then reduce-scattering; ``benchmarks/RESULTS.md``)."""

    fusion: F.FusionOp
    overlap_chunks: int | None = None
    overlap_reduce_scatter: bool = False
    _local: F.FusionOp | None = field(default=None, init=False, repr=False)
    _compiled: dict[Signature, Executable] = field(default_factory=dict, init=False, repr=False)
    _gpu: dict[tuple[Any, ...], Any] = field(default_factory=dict, init=False, repr=False)
    """Per GPU input key (``_gpu_key``), its ``GpuProgram`` (kernels compiled once, its
    replay), the stream it runs on and the two events joining that stream with the
    caller's."""
    _by_value: bool | None = field(default=None, init=False, repr=False)

    # ---- what each device runs ------------------------------------------------------
    @property
    def local_fusion(self) -> F.FusionOp:
        """The fusion every device runs on its shards (after ``propagate-shardings``
        and ``localize-shardings``)."""
        if self._local is None:
            self._local = _localize(self.fusion)
        return self._local

    @property
    def mesh(self) -> DeviceMeshAttr:
        mesh = self.local_fusion.attributes.get("fuser.mesh")
        assert isinstance(mesh, DeviceMeshAttr)
        return mesh

    def _shardings(self, key: str) -> list[ShardingAttr | None]:
        attr = self.local_fusion.attributes.get(key)
        assert isinstance(attr, ArrayAttr)
        return [s if isinstance(s, ShardingAttr) else None for s in attr.data]

    @property
    def input_shardings(self) -> list[ShardingAttr | None]:
        """Per input, its sharding (None: a scalar)."""
        return self._shardings("fuser.input_shardings")

    @property
    def output_shardings(self) -> list[ShardingAttr]:
        return [s for s in self._shardings("fuser.output_shardings") if s is not None]

    @property
    def passes(self) -> tuple[str, ...]:
        overlap: list[str] = []
        if self.overlap_chunks is not None:
            overlap.append(f"overlap-allgather-matmul{{chunks={self.overlap_chunks}}}")
        if self.overlap_reduce_scatter:
            overlap.append("overlap-matmul-reduce-scatter")
        i = MULTIDEVICE_PASSES.index("lower-communications") + 1
        return (*MULTIDEVICE_PASSES[:i], *overlap, *MULTIDEVICE_PASSES[i:])

    def executable(self, local_inputs: Sequence[Any]) -> Executable:
        """The compiled host program for these local inputs' shapes (cached)."""
        sig = Signature.of(self.local_fusion, list(local_inputs))
        exe = self._compiled.get(sig)
        if exe is None:
            exe = compile(self.local_fusion, sig, passes=self.passes)
            self._compiled[sig] = exe
        return exe

    # ---- data -----------------------------------------------------------------------
    def shard_inputs(self, inputs: Sequence[Any], rank: int) -> list[Any]:
        """Each input's part on device ``rank`` (global values in, local shards out)."""
        position = self._position(rank)
        out = []
        for x, s in zip(inputs, self.input_shardings, strict=True):
            out.append(x if s is None else shard_array(x, s, position))
        return out

    def _position(self, rank: int) -> int:
        p = self.mesh.position(rank)
        if p is None:
            raise ValueError(f"rank {rank} is not a device of mesh {self.mesh.devices}")
        return p

    # ---- running --------------------------------------------------------------------
    def run(self, local_inputs: Sequence[Any], communicator: Any) -> list[Any]:
        """Run this rank's host program on its local inputs; returns its outputs (each
        the local shard of the output's sharding). numpy inputs run on the CPU,
        torch CUDA tensors on the GPU."""
        self._check_world(communicator)
        inputs = list(local_inputs)
        from fuser.runtime import gpu_arrays as ga

        if any(ga.is_gpu_array(x) for x in inputs):
            return self._run_gpu(inputs, communicator)
        self._check_inputs(inputs)
        exe = self.executable(inputs)
        from fuser.runtime.host_evaluator import run_program

        return run_program(exe.module, _numpy(inputs), "main", communicator=communicator)

    def _gpu_key(self, inputs: Sequence[Any]) -> tuple[Any, ...]:
        """What decides a ``GpuProgram`` and its replay: each input's dtype, shape,
        strides, device and alignment class (scalars by type; by value when they
        decide sizes)."""
        from fuser.runtime.gpu_executor import fast_key

        if self._by_value is None:
            from fuser.schedulers.analysis.sizes import has_size_operands

            self._by_value = has_size_operands(self.local_fusion)
        return tuple(fast_key(x, self._by_value) for x in inputs)

    def _run_gpu(self, inputs: list[Any], communicator: Any) -> list[Any]:
        import torch

        from fuser.runtime import cuda_driver as drv
        from fuser.runtime import gpu_arrays as ga
        from fuser.runtime.gpu_program import GpuProgram

        key = self._gpu_key(inputs)
        entry = self._gpu.get(key)
        if entry is None:
            # The inputs' checks and the compilation, once per key: later calls with
            # the same key replay the program built for these inputs.
            self._check_inputs(inputs)
            exe = self.executable(inputs)
            # One pool stream per chunk of the overlapped loops (d x chunks), so no two
            # chunks share one (a chunk's GEMM would wait for another's transfer).
            streams = max(4, self.mesh.size * (self.overlap_chunks or 1))
            prog = GpuProgram(exe, inputs, torch_outputs=True, num_streams=streams)
            own = drv.Stream(device=prog.device)
            events = (drv.Event(timing=False, device=prog.device), drv.Event(timing=False, device=prog.device))
            entry = self._gpu[key] = (prog, own, events)
        prog, own, (entered, done) = entry
        prog.evaluator.communicator = communicator
        # The program runs on a stream of its own, after the caller's work and before
        # the caller's later work (never on the legacy default stream, which NCCL's
        # stream-ordered waits do not order reliably with).
        caller = ga.current_stream("torch", prog.device)
        entered.record(caller)
        entered.wait(own.ptr)
        with torch.cuda.stream(ga.torch_stream(own.ptr, prog.device)):
            outs = prog.run(inputs)
        done.record(own.ptr)
        done.wait(caller)
        caller_stream = ga.torch_stream(caller, prog.device)
        for o in outs:
            if isinstance(o, torch.Tensor) and o.is_cuda:
                o.record_stream(caller_stream)
        return outs

    def replayed(self, local_inputs: Sequence[Any]) -> bool:
        """Whether runs on the GPU on inputs like ``local_inputs`` replay the host
        program (``fuser.runtime.gpu_replay``: after the first run), rather than walk
        it."""
        entry = self._gpu.get(self._gpu_key(list(local_inputs)))
        return entry is not None and entry[0].replay is not None

    def _check_world(self, communicator: Any) -> None:
        mesh = self.mesh
        world = communicator.size
        if mesh.size > world or max(mesh.devices) >= world:
            raise ValueError(
                f"the fusion's mesh {mesh.devices} needs {max(mesh.devices) + 1} processes; the world "
                f"has {world}"
            )

    def _check_inputs(self, inputs: list[Any]) -> None:
        types = self.local_fusion.function_type.inputs.data
        if len(inputs) != len(types):
            raise ValueError(f"the fusion takes {len(types)} inputs, got {len(inputs)}")
        for i, (x, t, s) in enumerate(zip(inputs, types, self.input_shardings, strict=True)):
            if not isinstance(t, F.TensorType) or s is None:
                continue
            shape = list(getattr(x, "shape", ()))
            want = t.get_shape()
            if len(shape) != len(want) or any(w not in (DYN, g) for w, g in zip(want, shape, strict=True)):
                raise ValueError(
                    f"input #{i}: expected this rank's shard of shape {list(want)} ({s.describe()}), "
                    f"got shape {shape}"
                )


def _numpy(inputs: list[Any]) -> list[Any]:
    out = []
    for x in inputs:
        if type(x).__module__.startswith("torch"):
            from fuser.runtime.torch_arrays import torch_to_numpy

            out.append(torch_to_numpy(x))
        else:
            out.append(x)
    return out


def _localize(fusion: F.FusionOp) -> F.FusionOp:
    from xdsl.passes import PassPipeline

    from fuser.ir.context import make_context
    from fuser.passes import all_passes

    clone = fusion.clone()
    module = ModuleOp(Region(Block()))
    module.body.block.add_op(clone)
    try:
        PassPipeline.parse_spec(all_passes(), "propagate-shardings,localize-shardings").apply(make_context(), module)
        module.verify()
    except (DiagnosticException, ValueError) as e:
        raise CompileError(f"cannot shard @{fusion.sym_name.data}: {e}") from None
    if "fuser.mesh" not in clone.attributes:
        raise CompileError(f"cannot shard @{fusion.sym_name.data}: it declares no sharding (iterdomain.shard)")
    clone.detach()
    return clone
