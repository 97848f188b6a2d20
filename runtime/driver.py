"""The compiler driver: one fixed, printable pass pipeline from a fusion to an
``Executable``.

::

    sig = Signature.of(fusion, [x, y])          # shapes (and extent-setting scalars)
    exe = compile(fusion, sig, H100)             # the pipeline below, on a copy
    print(exe.pipeline)                          # what ran, as a fuser-opt -p spec
    outs = exe.run_on_cpu([x, y])                # the host program on the CPU

The pipeline is ``bind-sizes{sizes="<signature>"}`` followed by ``PASSES``::

    canonicalize, strip-bookend-views, mark-aliases, segment, fold-in-place-copies,
    select-schedulers{debug=true}, schedule-fusions

on a module holding a copy of the fusion and the target (``fuser.target``, the
``set-target`` attribute). Its result is an ``hir.program @main`` that launches
segment fusions, each annotated with the scheduler ``select-schedulers`` chose
(``fuser.schedule``) and scheduled by ``schedule-fusions`` (its loop nest as
``iterdomain`` ops); ``fuser-opt --print-pipeline`` prints the same spec, so
``fuser-opt -p "$(fuser-opt --print-pipeline=SIZES)"`` reproduces a compile. The
kernels of each ``hir.launch`` are lowered by ``lower-to-kernels``' lowering
(``fuser.codegen.lower.lower_segment``, reading the segment's loop nest and nothing
else: a pipeline without ``schedule-fusions`` compiles no kernel) for the layouts the
launch really sees (``Executable.launch_layouts``: the caller's strides and alignment
for program inputs, dense buffers for intermediates).

Every route from a definition to something that runs calls ``compile``: ``fd.execute``
on the CPU (``run_on_cpu``) and on the GPU (``fuser.runtime.gpu_program.GpuProgram``),
``fd.plan``, the kernel strings and ``execute_kernels_on_cpu``; the pipeline they use
is the fusion's ``fd.pipeline`` (``PASSES`` by default).

A pipeline without some pass (``compile(..., passes=...)``, ``fd.pipeline``)
changes what runs: without ``strip-bookend-views`` the views stay inside the
segment fusions, and so inside the kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Region
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.context import make_context
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.gc_pause import paused_gc
from fuser.passes import all_passes
from fuser.passes.target_option import TARGET_ATTR
from fuser.runtime.signature import Signature
from fuser.schedulers.target import DEFAULT_TARGET, GpuTarget, to_attr

__all__ = [
    "PASSES",
    "CompileError",
    "Executable",
    "Signature",
    "compile",
    "launch_layouts",
    "pipeline_spec",
]

PASSES: tuple[str, ...] = (
    "canonicalize",
    "strip-bookend-views",
    "mark-aliases",
    "segment",
    "fold-in-place-copies",
    "select-schedulers{debug=true}",
    "schedule-fusions",
)
"""The passes after ``bind-sizes``, in order: what ``fd.execute`` runs.
``select-schedulers`` records why the schedulers before the chosen one rejected each
segment (``debug``): ``fd.plan`` reads them from the IR. ``schedule-fusions`` writes
each segment's loop nest (``iterdomain`` ops), which is what its kernels are lowered
from (a ``no_op`` segment's: the kernel that materializes it when the host cannot
return views), every scheduler kind; a schedule that cannot be written, or that the
lowering rejects, is an error naming the segment."""


class CompileError(ValueError):
    """A fusion the pipeline cannot compile for a signature; names the pass's message."""


def pipeline_spec(sizes: str | None, passes: Sequence[str] = PASSES) -> str:
    """The pipeline as a ``fuser-opt -p`` spec for ``bind-sizes``' ``sizes`` option
    (``Signature.sizes_option``); without sizes, the passes after ``bind-sizes``."""
    head = [f'bind-sizes{{sizes="{sizes}"}}'] if sizes else []
    return ",".join([*head, *passes])


@dataclass
class Executable:
    """A compiled fusion: the module after the pipeline (segment fusions with their
    ``fuser.schedule`` and loop nests, ``hir.program @main``) and how it was made.

    The pipeline's trailing ``schedule-fusions`` (``deferred``) runs on first use of
    the segments (``module``, ``fusions``, ``callee``, ``launch_layouts``, kernels):
    the reference interpreter (``run_on_cpu`` without kernels) needs no loop nests,
    and a CPU run compiles faster without them."""

    _module: ModuleOp
    signature: Signature
    target: GpuTarget
    pipeline: str
    name: str
    deferred: tuple[str, ...] = ()
    """Passes of the pipeline not run yet (``schedule-fusions``)."""
    program: H.ProgramOp = field(init=False)
    _fusions: dict[str, F.FusionOp] = field(init=False)

    def __post_init__(self) -> None:
        self.program = next(op for op in self._module.ops if isinstance(op, H.ProgramOp))
        self._fusions = {op.sym_name.data: op for op in self._module.ops if isinstance(op, F.FusionOp)}

    def schedule(self) -> None:
        """Run the deferred passes (once)."""
        if not self.deferred:
            return
        passes, self.deferred = self.deferred, ()
        try:
            with paused_gc():
                PassPipeline.parse_spec(all_passes(), ",".join(passes)).apply(make_context(), self._module)
                self._module.verify()
        except (DiagnosticException, ValueError) as e:
            raise CompileError(f"cannot compile @{self.name}: {e}") from None

    @property
    def module(self) -> ModuleOp:
        """The compiled module, every pass of the pipeline run."""
        self.schedule()
        return self._module

    @property
    def fusions(self) -> dict[str, F.FusionOp]:
        """The segment fusions by symbol, scheduled."""
        self.schedule()
        return self._fusions

    @property
    def launches(self) -> list[H.LaunchOp]:
        """Every ``hir.launch`` of the program, in program order."""
        return [op for op in self.program.walk() if isinstance(op, H.LaunchOp)]

    def callee(self, launch: H.LaunchOp) -> F.FusionOp:
        return self.fusions[launch.callee.root_reference.data]

    def launch_layouts(
        self, layouts: Sequence[Any], scalars: Sequence[Any]
    ) -> list[tuple[F.FusionOp, list[Any], list[Any]]]:
        """Each launch's segment with its arguments' layouts and scalar values
        (``launch_layouts`` of the program)."""
        return launch_layouts(self.program, self.fusions, layouts, scalars)

    def run_on_cpu(self, flat: Sequence[Any], kernels: bool = False, nvrtc: bool = True) -> list[Any]:
        """The host program on the CPU (numpy buffers and views). Each launch runs its
        segment with the reference interpreter (the fast CPU mode), or with
        ``kernels`` the generated kernels in the CPU kernel interpreter (``nvrtc``:
        also compiled with NVRTC)."""
        from fuser.runtime.host_evaluator import run_program

        if kernels:
            from fuser.runtime.cpu_runner import KernelHostEvaluator

            return KernelHostEvaluator(self.module, nvrtc=nvrtc).run(list(flat), "main")
        return run_program(self._module, list(flat), "main")


def launch_layouts(
    program: H.ProgramOp,
    callees: dict[str, F.FusionOp],
    layouts: Sequence[Any],
    scalars: Sequence[Any],
    where: str = "",
) -> list[tuple[F.FusionOp, list[Any], list[Any]]]:
    """Each ``hir.launch`` of ``program`` (in program order) with its segment (from
    ``callees``, by name) and the layouts (``TensorLayout``) and scalar values of its
    arguments: a program input keeps the caller's layout (``layouts[i]``, and
    ``scalars[i]``), an intermediate is the dense buffer the program allocates for it,
    in the stride order its segment declares. ``where`` prefixes the error of an
    intermediate whose shape the host cannot compute."""
    from fuser.codegen.lower.common import TensorLayout
    from fuser.passes.segment import host_shapes

    env = host_shapes(program, {i: lay.shape for i, lay in enumerate(layouts) if lay is not None})
    out = []
    for op in program.walk():
        if not isinstance(op, H.LaunchOp):
            continue
        seg = callees[op.callee.root_reference.data]
        seg_layouts: list[Any] = []
        seg_scalars: list[Any] = []
        for a, decl in zip(op.args, seg.inputs, strict=True):
            if isinstance(a, BlockArgument) and a.owner is program.body.block:
                seg_layouts.append(layouts[a.index])
                seg_scalars.append(scalars[a.index])
            elif isinstance(decl.type, F.TensorType):
                shape = env.get(a)
                if not isinstance(shape, tuple):
                    raise CompileError(f"{where}no concrete shape for an input of @{seg.sym_name.data}")
                seg_layouts.append(TensorLayout.with_stride_order(shape, decl.type.get_stride_order()))
                seg_scalars.append(None)
            else:
                seg_layouts.append(None)
                seg_scalars.append(env.get(a))
        out.append((seg, seg_layouts, seg_scalars))
    return out


def compile(  # noqa: A001 - the driver's verb, as torch.compile
    fusion: F.FusionOp,
    signature: Signature,
    target: GpuTarget = DEFAULT_TARGET,
    passes: Sequence[str] = PASSES,
) -> Executable:
    """Run the pipeline (module docstring) on a copy of ``fusion`` for ``signature``
    and ``target``. Pass diagnostics become ``CompileError`` naming the fusion."""
    from fuser.passes.bind_sizes import BindSizes

    clone = fusion.clone()
    module = ModuleOp(Region(Block()))
    module.body.block.add_op(clone)
    module.attributes[TARGET_ATTR] = to_attr(target)
    name = fusion.sym_name.data
    spec = pipeline_spec(signature.sizes_option(), passes)
    ctx = make_context()
    now = list(passes)
    deferred: list[str] = []
    while now and now[-1].split("{", 1)[0] == "schedule-fusions":  # run on first use
        deferred.insert(0, now.pop())
    try:
        with paused_gc():
            BindSizes(signature.sizes_option()).apply(ctx, module)
            if now:
                PassPipeline.parse_spec(all_passes(), ",".join(now)).apply(ctx, module)
            module.verify()  # what runs is valid IR, as fuser-opt would print it
    except (DiagnosticException, ValueError) as e:
        raise CompileError(f"cannot compile @{name}: {e}") from None
    if not any(isinstance(op, H.ProgramOp) for op in module.ops):
        raise CompileError(
            f"cannot compile @{name}: the pipeline '{spec}' made no hir.program "
            "(it needs the segment pass)"
        )
    return Executable(module, signature, target, spec, name, tuple(deferred))

