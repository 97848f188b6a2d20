"""``torch.compile(model, backend="fuser")``: ATen graphs partitioned into fuser
fusions, the rest left to torch.

Dynamo captures the model; AOTAutograd traces the forward and the backward into
ATen graphs (core ATen decompositions: layer norm, GELU, softmax and their backwards
become pointwise ops and reductions), split between them by inductor's min-cut
partitioner (``aot_partitioner()``); ``compile_graph`` then

1. marks every node fuser runs (``torch_graph.unsupported_reason``),
2. groups them into partitions (``partitioning()``): by default with torch's
   ``CapabilityBasedPartitioner`` (maximal groups without a cycle through a torch
   node); with ``FUSER_PARTITIONS=ordered``, in graph order (``ordered_partitions``:
   a partition grows until a node needs a torch node that needs the partition, so
   each partition stays where its nodes were). The maximal groups put all twelve
   layers' weight-gradient GEMMs of GPT-2's backward into one partition at its end,
   which keeps every layer's gradients alive until then: the ordered ones take less
   at the peak (9.1 against 10.9 GB with the min-cut partitioner) but made the step
   slower (18.51 against 16.56 ms; benchmarks/RESULTS.md, eleventh session).
3. replaces each partition's submodule by a ``FuserPartition``: its
   ``FusionDefinition`` (``torch_graph.definition_of``), run with ``fd.execute``
   (segmented, matmuls as cuBLAS segments, generated kernels for the rest). A
   partition fuser cannot translate stays the torch submodule it was.

The compiled graph module runs the partitions and the torch nodes between them.
Dynamo caches it per guard set: a new graph (or new sizes) compiles again, a repeated
call does not. Every compiled graph is recorded in a ``Report``;
``explain(model, *inputs)`` runs the model once through the backend and returns the
report of that run::

    >>> print(fuser.explain(model, x))
    graph 0 (forward): 3 partitions in fuser, 2 ops in torch
      fuser: 41 ops (aten.addmm.default x4, aten.mul.Tensor x12, ...)
      torch: aten.embedding.default x2 (no fuser equivalent), ...
"""

from __future__ import annotations

import collections
import contextlib
import functools
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from fuser.frontend.pad_matmuls import pad_matmuls
from fuser.frontend.torch_graph import (
    TranslationError,
    definition_of,
    op_name,
    traced_strides,
    unsupported_reason,
)

__all__ = ["FuserPartition", "GraphReport", "Report", "compile_graph", "explain", "fuser_backend"]


@dataclass
class GraphReport:
    """What one compiled ATen graph runs where."""

    kind: str
    """``forward``, ``backward`` or ``inference``."""
    partitions: list[list[str]] = field(default_factory=list)
    """The ops (by name) of each partition fuser runs."""
    fallbacks: list[tuple[list[str], str]] = field(default_factory=list)
    """Partitions fuser could not translate: their ops and why (they run in torch)."""
    torch_ops: list[tuple[str, str]] = field(default_factory=list)
    """Ops left to torch and why (``torch_graph.unsupported_reason``)."""

    @property
    def fuser_ops(self) -> list[str]:
        return [op for p in self.partitions for op in p]

    def __str__(self) -> str:
        def counts(names: Sequence[str]) -> str:
            c = collections.Counter(names)
            return ", ".join(f"{n} x{k}" if k > 1 else n for n, k in c.most_common())

        lines = [
            f"{self.kind}: {len(self.partitions)} partition(s) in fuser ({len(self.fuser_ops)} ops), "
            f"{len(self.torch_ops) + sum(len(o) for o, _ in self.fallbacks)} op(s) in torch"
        ]
        for i, p in enumerate(self.partitions):
            lines.append(f"  fuser partition {i}: {counts(p)}")
        for ops, why in self.fallbacks:
            lines.append(f"  torch (translation failed: {why}): {counts(ops)}")
        by_reason: dict[str, list[str]] = collections.defaultdict(list)
        for op, why in self.torch_ops:
            by_reason[why].append(op)
        for why, ops in by_reason.items():
            lines.append(f"  torch ({why}): {counts(ops)}")
        return "\n".join(lines)


@dataclass
class Report:
    """Every graph compiled while the report was being recorded."""

    graphs: list[GraphReport] = field(default_factory=list)

    @property
    def fuser_ops(self) -> list[str]:
        return [op for g in self.graphs for op in g.fuser_ops]

    @property
    def torch_ops(self) -> list[str]:
        return [op for g in self.graphs for op, _ in g.torch_ops] + [
            op for g in self.graphs for ops, _ in g.fallbacks for op in ops
        ]

    def __str__(self) -> str:
        return "\n".join(f"graph {i} ({g})" for i, g in enumerate(self.graphs)) or "no graph compiled"


_reports: list[Report] = []
_reports_lock = threading.Lock()


def _record(graph: GraphReport) -> None:
    with _reports_lock:
        for report in _reports:
            report.graphs.append(graph)


@contextlib.contextmanager
def recording() -> Iterator[Report]:
    """Record the graphs compiled inside the block in a fresh ``Report``: by any
    thread (on CUDA the backward, and so its lazy compilation, runs on autograd's
    device thread)."""
    report = Report()
    with _reports_lock:
        _reports.append(report)
    try:
        yield report
    finally:
        with _reports_lock:
            _reports.remove(report)


class FuserPartition:
    """A partition's callable: its ``FusionDefinition`` run on the partition's inputs,
    its outputs returned as the submodule returned them (one value or a tuple).

    With ``FUSER_BACKEND_CHECK=1`` in the environment every call also runs the torch
    submodule (``reference``) and raises ``AssertionError`` naming the partition's
    output that differs (a debugging aid, as torch's accuracy minifier). When the first
    run fails (fuser cannot compile the fusion for these inputs) the partition warns
    once and runs ``reference`` from then on; later errors propagate."""

    def __init__(
        self,
        fd: Any,
        single: bool,
        reference: Any = None,
        strides: Sequence[tuple[int, ...] | None] = (),
        input_strides: Sequence[tuple[int, ...] | None] = (),
        device: str | None = None,
    ) -> None:
        self.fd = fd
        self.single = single
        self.reference = reference
        self.device = device
        """Where a partition without tensor inputs runs (its nodes' traced device,
        ``"cuda:0"`` or ``"cpu"``; ``execute_options.default_device_as``); None: where
        its inputs are."""
        self.input_strides = list(input_strides)
        """Per argument, the strides torch's trace gave it (None: not a tensor or not
        known): an argument laid out otherwise is copied into them when fuser rejects
        its layout."""
        self.strides = list(strides)
        """Per output, the strides torch's trace gave it (None: not checked). Later
        torch ops may depend on them (``view`` needs compatible strides), so an output
        laid out otherwise is copied into them."""

    failed: str | None = None
    """Why the first run failed (then every call runs ``reference``, torch's own
    submodule, and a warning said so once); None while fuser runs it."""
    ran = False

    def __call__(self, *args: Any) -> Any:
        if self.failed is not None:
            return self.reference(*args)
        if self.ran or self.reference is None:
            try:
                outs = self._execute(list(args))
            except ValueError:
                # An input traced row-major (so declared) that is laid out otherwise
                # this time: copied into the traced strides.
                fixed = [self._as_traced(i, a) for i, a in enumerate(args)]
                if all(x is y for x, y in zip(fixed, args, strict=True)):
                    raise
                outs = self._execute(fixed)
        else:
            try:  # the first run compiles: a fusion fuser cannot compile runs in torch
                outs = self._execute(list(args))
            except (ValueError, NotImplementedError, RuntimeError) as e:
                self.failed = f"{type(e).__name__}: {e}"
                warnings.warn(
                    f"fuser: a partition runs in torch: fuser could not run it ({self.failed})",
                    RuntimeWarning,
                    stacklevel=2,
                )
                return self.reference(*args)
            self.ran = True
        for i, want in enumerate(self.strides):
            if want is not None and not _same_strides(outs[i], want):
                outs[i] = _output_as_traced(outs[i], want)
        if self.reference is not None and os.environ.get("FUSER_BACKEND_CHECK") == "1":
            _compare(self.reference, args, outs)
        return outs[0] if self.single else tuple(outs)

    def _execute(self, args: list[Any]) -> list[Any]:
        if self.device is None:
            return self.fd.execute(args)
        from fuser.frontend.execute_options import default_device_as

        with default_device_as(self.device):
            return self.fd.execute(args)

    def _as_traced(self, i: int, a: Any) -> Any:
        """Argument ``i`` in the strides its trace had (contiguous when unknown)."""
        if not hasattr(a, "is_contiguous"):
            return a
        want = self.input_strides[i] if i < len(self.input_strides) else None
        if want is None:
            return a if a.is_contiguous() else a.contiguous()
        return a if _laid_out_as(a, want) else _restrided(a, want)


def _same_strides(t: Any, want: Sequence[int]) -> bool:
    """Whether ``t`` is laid out as ``want`` says on the axes that hold data (axes of
    extent 1, and axes ``want`` broadcasts with a zero stride, aside), or ``want`` is
    no layout a new buffer can have (overlap). A layout with gaps is one: SDPA's
    memory-efficient kernel needs its bias in rows padded to 16 bytes
    (``preprocess_mask``: a slice of a padded tensor, expanded over the batch:
    strides (0, 0, 8, 1) for rows of 6)."""
    if t.stride() == want:  # the common case, first: every partition output, every call
        return True
    held = [(e, s, w) for e, s, w in zip(t.shape, t.stride(), want, strict=True) if e > 1 and w != 0]
    return all(s == w for _, s, w in held) or _overlapping([e for e, _, _ in held], [w for _, _, w in held])


def _overlapping(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether two elements of ``shape`` share an address under ``strides`` (or a
    stride is negative): no new buffer has that layout."""
    acc = 1
    for stride, extent in sorted((s, e) for e, s in zip(shape, strides, strict=True) if e > 1):
        if stride < acc:
            return True
        acc = stride * extent
    return False


def _output_as_traced(t: Any, want: Sequence[int]) -> Any:
    """The partition output ``t`` copied into the traced strides ``want``: its axes of
    stride 0 were a broadcast in torch (equal along them), so one slice is copied
    and expanded again."""
    if all(w != 0 or e <= 1 for e, w in zip(t.shape, want, strict=True)):
        return _restrided(t, want)
    one = tuple(slice(None) if w != 0 else slice(0, 1) for w in want)
    return _restrided(t[one], want).expand(t.shape)


def _laid_out_as(t: Any, want: Sequence[int]) -> bool:
    """Whether the tensor ``t`` has the strides ``want`` (axes of extent 1 aside)."""
    return all(e <= 1 or s == w for e, s, w in zip(t.shape, t.stride(), want, strict=True))


def _restrided(t: Any, want: Sequence[int]) -> Any:
    import torch

    out = torch.empty_strided(tuple(t.shape), tuple(want), dtype=t.dtype, device=t.device)
    return out.copy_(t)


def _compare(reference: Any, args: Sequence[Any], outs: Sequence[Any]) -> None:
    import torch

    want = reference(*args)
    want = list(want) if isinstance(want, list | tuple) else [want]
    for i, (w, g) in enumerate(zip(want, outs, strict=True)):
        tol = 1e-2 if w.dtype in (torch.bfloat16, torch.float16) else 1e-4
        if not torch.allclose(g.to(w.dtype), w, rtol=tol, atol=tol, equal_nan=True):
            raise AssertionError(
                f"fuser partition output {i} ({tuple(w.shape)} {w.dtype}) differs from torch by "
                f"{(g.double() - w.double()).abs().max().item():.3g}:\n{reference.graph}"
            )


NEW_TENSORS_ONLY = "a partition of new tensors only, traced on several devices (or on none)"
"""Why the ops of a partition without inputs stay in torch (``GraphReport.torch_ops``):
one whose nodes' traced values are all on one device runs there
(``FuserPartition.device``)."""


def _keep_cpu_tensors_in_torch(reasons: dict[Any, str | None]) -> None:
    """In a graph on the GPU, the nodes that make CPU tensors (``torch.tensor(0.0)`` in
    a model's code: a ``lift_fresh_copy`` of a CPU constant) stay in torch: a partition
    may join nodes that share no data, and one mixing devices would hand fuser's GPU
    program a CPU tensor."""
    devices = {_device_of(node) for node, why in reasons.items() if why is None} - {None}
    if "cpu" not in devices or len(devices) < 2:
        return
    for node, why in reasons.items():
        if why is None and _device_of(node) == "cpu":
            reasons[node] = "a CPU tensor in a graph on the GPU"


def _device_of(node: Any) -> str | None:
    """The device ``node``'s traced value is on (``"cuda:0"``, ``"cpu"``; the first
    of a tuple), or None when its trace has no tensor."""
    val = node.meta.get("val")
    val = val[0] if isinstance(val, list | tuple) and val else val
    device = getattr(val, "device", None)
    if device is None:
        return None
    return "cpu" if device.type == "cpu" else f"{device.type}:{device.index or 0}"


def _nodes_of(module: Any) -> list[Any]:
    return [n for n in module.graph.nodes if n.op == "call_function"]


def compile_graph(gm: Any, example_inputs: Sequence[Any], kind: str = "inference") -> Callable[..., Any]:
    """``gm`` (an ATen FX graph) with its fuser-supported nodes in ``FuserPartition``s
    (module docstring); records a ``GraphReport``."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupport

    del example_inputs
    reasons = {node: unsupported_reason(node) for node in _nodes_of(gm)}
    _keep_cpu_tensors_in_torch(reasons)

    class _Support(OperatorSupport):
        def is_node_supported(self, submodules: Any, node: Any) -> bool:
            return node.op == "call_function" and reasons.get(node, "") is None

    report = GraphReport(kind)
    free = _free_ops()
    for node, reason in reasons.items():
        if reason is not None and node.target not in free:
            report.torch_ops.append((op_name(node.target), reason))
    support = _Support()
    partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
    if partitioning() == "ordered":
        partitions = ordered_partitions(gm, lambda n: support.is_node_supported({}, n))
    else:
        partitions = partitioner.propose_partitions()
    # A partition of getitems alone would only unpack tuples: leave it to torch.
    partitions = [p for p in partitions if any(_computes(n) for n in p.nodes)]
    fused = partitioner.fuse_partitions(partitions)
    for node in list(fused.graph.nodes):
        if node.op != "call_module":
            continue
        sub = getattr(fused, node.target)
        ops = [op_name(n.target) for n in _nodes_of(sub)]
        device = None
        if not any(n.op == "placeholder" for n in sub.graph.nodes):
            # Only new tensors (zeros, arange, the position buckets computed from
            # them): no input says where they belong, their trace does. Nodes on
            # several devices stay in torch (not a failed translation).
            devices = {_device_of(n) for n in _nodes_of(sub) if _computes(n)}
            if len(devices) != 1 or None in devices:
                report.torch_ops.extend((op, NEW_TENSORS_ONLY) for op in ops)
                continue
            device = devices.pop()
        try:
            fd = definition_of(sub)
        except TranslationError as e:
            report.fallbacks.append((ops, str(e)))
            continue
        if half_in_float():
            fd.pipeline = backend_pipeline()
        out = next(n for n in sub.graph.nodes if n.op == "output")
        single = not isinstance(out.args[0], list | tuple)
        values = [out.args[0]] if single else list(out.args[0])
        strides = [traced_strides(v) for v in values]
        in_strides = [traced_strides(p) for p in sub.graph.nodes if p.op == "placeholder"]
        partition = FuserPartition(fd, single, sub, strides, in_strides, device)
        setattr(fused, node.target, _module_class()(partition))
        report.partitions.append(ops)
    fused.recompile()
    _record(report)
    return fused


PARTITIONINGS = ("maximal", "ordered")


def half_in_float() -> bool:
    """Whether partitions compute half-precision elementwise chains in float32 and
    round once (``compute-half-in-float``, as inductor does): ``FUSER_HALF_IN_FLOAT``
    in the environment, ``1`` (the default) or ``0`` (every op rounds, as eager)."""
    return _env_choice("FUSER_HALF_IN_FLOAT", ("1", "0")) == "1"


def backend_pipeline() -> tuple[str, ...]:
    """The driver's passes with ``compute-half-in-float`` after ``segment``: on each
    segment, so that the values passed between kernels keep their dtype (run before
    it, a tiny Llama's partitions passed five float32 intermediates instead of bf16)."""
    from fuser.runtime.driver import PASSES

    at = PASSES.index("segment") + 1
    return (*PASSES[:at], "compute-half-in-float", *PASSES[at:])


def partitioning() -> str:
    """How ``compile_graph`` groups supported nodes: ``FUSER_PARTITIONS`` in the
    environment, ``"maximal"`` (the default) or ``"ordered"``; ``ValueError`` naming
    the variable for anything else."""
    return _env_choice("FUSER_PARTITIONS", PARTITIONINGS)


def _env_choice(name: str, choices: Sequence[str]) -> str:
    """Environment variable ``name``: one of ``choices`` (the first when unset);
    ``ValueError`` naming the variable for anything else."""
    value = os.environ.get(name, choices[0])
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def ordered_partitions(gm: Any, supported: Callable[[Any], bool]) -> list[Any]:
    """The supported nodes of ``gm`` in partitions that keep the graph's order: a walk
    in graph order adds each supported node to the open partition, unless it reads a
    value that depends on the open partition through an unsupported node (a torch
    node that needs the partition's result must run between them). Then the open
    partition closes and the node opens the next one. Unsupported nodes that do not
    depend on the open partition (constants, ``arange``, another branch) do not close
    it. A ``getitem`` joins the partition of the tuple it unpacks, or stays in torch.

    Every external input of a partition is defined before its first node or
    independently of it, and no partition reads another's later result. So fusing
    them (``fuse_partitions``, which sorts the graph topologically) makes no cycle,
    and no partition moves far from where its nodes were."""
    from torch.fx.passes.infra.partitioner import Partition

    partitions: list[Any] = []
    members: dict[Any, None] = {}  # the open partition, in graph order
    tainted: set[Any] = set()  # unsupported nodes that depend on the open partition
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        if supported(node) and (_computes(node) or node.args[0] in members):  # a getitem goes with its tuple
            if members and any(a in tainted for a in node.all_input_nodes):
                partitions.append(Partition(id=len(partitions), nodes=members))
                members, tainted = {}, set()
            members[node] = None
        elif any(a in members or a in tainted for a in node.all_input_nodes):
            tainted.add(node)
    if members:
        partitions.append(Partition(id=len(partitions), nodes=members))
    return partitions


def _free_ops() -> set[Any]:
    """Ops torch runs without touching data (new tensor objects on the same storage):
    left to torch and not reported."""
    import torch

    aten = torch.ops.aten
    return {aten.detach.default, aten.alias.default}


def _computes(node: Any) -> bool:
    import operator

    return node.op == "call_function" and node.target is not operator.getitem


@functools.cache
def _module_class() -> type:
    """The ``torch.nn.Module`` that a partition's ``call_module`` node calls."""
    import torch

    class FuserPartitionModule(torch.nn.Module):
        def __init__(self, partition: FuserPartition) -> None:
            super().__init__()
            self.partition = partition

        def forward(self, *args: Any) -> Any:
            return self.partition(*args)

    return FuserPartitionModule


def _compiler(kind: str) -> Callable[[Any, Sequence[Any]], Callable[..., Any]]:
    def compile_fn(gm: Any, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        from functorch.compile import make_boxed_func

        if kind == "inference":
            pad_matmuls(gm)  # (a training graph's products are padded in the joint graph)
        return make_boxed_func(compile_graph(gm, example_inputs, kind))

    return compile_fn


DECOMPOSED = (
    "gelu", "gelu_backward", "native_layer_norm", "native_layer_norm_backward", "_softmax",
    "_softmax_backward_data", "_log_softmax", "_log_softmax_backward_data", "silu", "silu_backward",
    "tanh_backward", "sigmoid_backward", "rsub", "threshold_backward", "native_dropout_backward",
    "mse_loss", "mse_loss_backward", "addcmul", "addcdiv", "lerp", "hardtanh", "hardtanh_backward",
    "leaky_relu", "leaky_relu_backward", "elu", "elu_backward", "hardsigmoid", "hardswish",
)
"""Composite ATen ops decomposed into the pointwise ops and reductions fuser fuses.
A curated list, not ``core_aten_decompositions()``: with torch 2.13 that table gives a
tiny GPT-2's training step gradients off by 0.15 even with every graph left to torch
(tests/test_torch_backend.py checks the gradients against eager)."""


def _decompositions() -> dict[Any, Any]:
    import torch
    from torch._decomp import get_decompositions

    from fuser.frontend.loss_decompositions import loss_decompositions

    aten = torch.ops.aten
    return {**get_decompositions([getattr(aten, name) for name in DECOMPOSED]), **loss_decompositions()}


def fuser_backend(gm: Any, example_inputs: Sequence[Any], **kwargs: Any) -> Callable[..., Any]:
    """The torch.compile backend (``backend="fuser"``; the ``torch_dynamo_backends``
    entry point): AOTAutograd with ``compile_graph`` as forward and backward compiler."""
    from torch._dynamo.backends.common import aot_autograd

    partition_fn = padded_default_partition if aot_partitioner() == "default" else min_cut_without_detach
    backend = aot_autograd(
        fw_compiler=_compiler("forward"),
        bw_compiler=_compiler("backward"),
        inference_compiler=_compiler("inference"),
        decompositions=_decompositions(),
        partition_fn=partition_fn,
    )
    return backend(gm, example_inputs, **kwargs)


def min_cut_without_detach(joint: Any, joint_inputs: Any, **kwargs: Any) -> Any:
    """Inductor's min-cut partitioner on the joint graph with its ``aten.detach``
    nodes removed (a traced joint graph is functional, so a detach only names its
    operand again). Autograd detaches every output a derivative formula saves (a
    log-softmax's, a tanh's): min-cut counts a detach as a consumer it cannot fuse, so
    it must save that output and may not recompute it. Without them it may: GPT-2's
    loss graph then saves the bf16 logits and two numbers a row instead of the float32
    log-probabilities (``loss_decompositions``). Unaligned matrix products are padded
    first (``pad_matmuls``)."""
    import torch
    from functorch.compile import min_cut_rematerialization_partition

    pad_matmuls(joint)
    detach = torch.ops.aten.detach.default
    for node in list(joint.graph.nodes):
        if node.op == "call_function" and node.target is detach:
            node.replace_all_uses_with(node.args[0])
            joint.graph.erase_node(node)
    joint.recompile()
    return min_cut_rematerialization_partition(joint, joint_inputs, **kwargs)


def padded_default_partition(joint: Any, joint_inputs: Any, **kwargs: Any) -> Any:
    """AOTAutograd's own partitioner after ``pad_matmuls``."""
    from functorch.compile import default_partition

    pad_matmuls(joint)
    return default_partition(joint, joint_inputs, **kwargs)


AOT_PARTITIONERS = ("min_cut", "default")


def aot_partitioner() -> str:
    """Which AOTAutograd partitioner splits the joint graph into forward and backward:
    ``FUSER_AOT_PARTITIONER`` in the environment, ``"min_cut"`` (the default;
    inductor's: it saves fewer, smaller tensors and recomputes cheap ones in the
    backward; a CPU trace of a 2-layer GPT-2 saves 49 MB of the loss graph's float32
    logits instead of 98) or ``"default"`` (AOTAutograd's own: the backward reads what
    the forward computed); ``ValueError`` naming the variable for anything else. On
    the H100 the GPT-2 small step peaks at 10.9 GB with min-cut against 11.9 with
    AOTAutograd's partitioner, each in its own process; the step times (16.56 and
    17.77 ms there, 19.07 and 18.12 in one shared process) differ by less than their
    run-to-run spread (``benchmarks/RESULTS.md``, eleventh session)."""
    return _env_choice("FUSER_AOT_PARTITIONER", AOT_PARTITIONERS)


def explain(model: Any, *inputs: Any, backward: bool = False, **kwargs: Any) -> Report:
    """Run ``model(*inputs, **kwargs)`` once through ``torch.compile(backend="fuser")``
    (a fresh compilation) and report what ran in fuser and what in torch; with
    ``backward``, also the backward of the sum of the (first) output."""
    import torch

    torch._dynamo.reset()  # noqa: SLF001 - compile afresh, so the report sees every graph
    compiled = torch.compile(model, backend=fuser_backend)
    with recording() as report:
        out = compiled(*inputs, **kwargs)
        if backward:
            first = out if isinstance(out, torch.Tensor) else getattr(out, "loss", None)
            if first is None:
                first = out[0]
            first.sum().backward()
    return report
