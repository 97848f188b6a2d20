"""``lower-to-kernels``: add the kernel-level IR that implements each fusion.

For every ``fuser.fusion`` of the module the pass builds the kernels that run it
(``fuser.codegen.lower.lower_segment``, which reads the loop nest ``schedule-fusions``
wrote, or one written by hand) at the static extents of its inputs (``bind-sizes``
binds symbolic ones) and inserts them after the fusion as ``kernel.func`` ops. The
fusion stays (host programs launch it by symbol) and lists its kernels; each kernel
records its launch::

    fuser.fusion @gelu(%t0 : !fuser.tensor<8192x3072xf32>) -> ... { ... }

becomes::

    fuser.fusion @gelu(...) -> ... attributes {fuser.kernels = [@gelu_kernel]} { ... }
    kernel.func @gelu_kernel(%in0 : memref<?xf32>, %out0 : memref<?xf32>) attributes {
        block_size = array<i32: 128, 1, 1>, fuser.grid = array<i64: 12288, 1, 1>,
        fuser.launch_args = ["input 0", "output 0"], index_bits = 32 : i64} { ... }

On an sm_90 target, kernels of at most two waves of blocks and no clusters are marked
``dependent_launch`` as the runtime marks them (``codegen/dependent_launch.py``; 12288
blocks of 128 threads are 5.8 waves on the H100, so not here).

``fuser-opt ... --lower-to-kernels -t cuda`` then prints the CUDA C of every kernel.
Inputs are taken as dense tensors in their declared stride order (the layouts
kernels are specialized for at run time are the caller's).

``symbolic`` makes extents kernel parameters (``fuser.ir.symbolic``), so that the
kernel serves every size of them: ``symbolic=batch`` those ``fd.execute`` makes
symbolic (axis 0 of the highest-rank inputs), or a list ``INPUT:AXIS,...``; each
becomes an int64 ``extent_n<j>`` argument, recorded in ``fuser.launch_args`` as
``extent <j> = <its value here>``. Empty (the default): every extent is a constant.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from fuser.codegen.aliased_args import in_place_pairs
from fuser.codegen.dependent_launch import lower_for_launch
from fuser.codegen.lower.common import (
    ArgRef,
    LoweringError,
    TensorLayout,
    batch_axes,
    symbolic_layouts,
)
from fuser.ir.dialects.fuser import FusionOp, TensorType
from fuser.passes.host_rewrites import launches_by_callee
from fuser.passes.select_schedulers import SCHEDULE_ATTR
from fuser.passes.sizes_option import static_sizes
from fuser.passes.target_option import resolve_target
from fuser.schedulers.analysis.sizes import SizeBindingError
from fuser.schedulers.params import ScheduleAttrError, read_schedule

KERNELS_ATTR = "fuser.kernels"


class LowerToKernelsError(DiagnosticException):
    """A fusion that cannot be lowered (names the fusion and the reason)."""


@dataclass(frozen=True)
class LowerToKernelsPass(ModulePass):
    """Insert the ``kernel.func``s of every fusion (see the module docstring)."""

    name = "lower-to-kernels"

    gpu: str = ""
    symbolic: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = resolve_target(op, self.gpu, self.name)
        chosen = _symbolic_axes(self.symbolic) if self.symbolic not in ("", "batch") else None
        launches = launches_by_callee(op)
        for fusion in [f for f in op.ops if isinstance(f, FusionOp)]:
            name = f"@{fusion.sym_name.data}"
            shapes = static_sizes(fusion, self.name)
            layouts: list[TensorLayout | None] = []
            scalars: list[object] = []
            for a, s in zip(fusion.inputs, shapes, strict=True):
                if isinstance(a.type, TensorType):
                    layouts.append(TensorLayout.with_stride_order(s, a.type.get_stride_order()))  # type: ignore[arg-type]
                    scalars.append(None)
                else:
                    layouts.append(None)
                    scalars.append(s)
            _check_schedule(fusion)
            if self.symbolic:
                axes = batch_axes([lay.shape if lay is not None else None for lay in layouts])
                for i, axis in chosen if chosen is not None else axes:
                    lay = layouts[i] if i < len(layouts) else None
                    if lay is None or axis >= len(lay.shape):
                        raise LowerToKernelsError(
                            f"lower-to-kernels: {name} has no tensor input #{i} with an axis {axis} (symbolic option)"
                        )
                layouts = symbolic_layouts(layouts, chosen if chosen is not None else axes)
            try:
                # lower_segment reads the loop nest (iterdomain ops) or else the
                # recorded fuser.schedule itself.
                # The outputs some launch writes into an input's buffer
                # (codegen/aliased_args.py): the kernel is shared by every launch.
                in_place = sorted({p for launch in launches.get(fusion.sym_name.data, ())
                                   for p in in_place_pairs(launch, fusion)})
                lowered = lower_for_launch(fusion, layouts, target, scalars, None, f"{fusion.sym_name.data}_kernel",
                                           in_place=in_place)
            except (LoweringError, SizeBindingError) as e:
                raise LowerToKernelsError(f"lower-to-kernels: cannot lower {name}: {e}") from None
            anchor = fusion
            names = []
            for k in lowered.kernels:
                for func in list(k.module.ops):
                    func.detach()
                    func.attributes["fuser.grid"] = DenseArrayBase.from_list(i64, list(k.grid))
                    func.attributes["fuser.launch_args"] = ArrayAttr([StringAttr(_launch_arg(a)) for a in k.args])
                    op.body.block.insert_op_after(func, anchor)
                    anchor = func
                    names.append(SymbolRefAttr(k.name))
            fusion.attributes[KERNELS_ATTR] = ArrayAttr(names)


def _launch_arg(a: ArgRef) -> str:
    return f"extent {a.index} = {a.value}" if a.kind == "extent" else f"{a.kind} {a.index}"


def _symbolic_axes(text: str) -> list[tuple[int, int]]:
    """``"0:0,1:0"`` -> ``[(0, 0), (1, 0)]`` (the ``symbolic`` option)."""
    out = []
    for item in text.split(","):
        a, sep, b = item.strip().partition(":")
        if not (sep and a.isdigit() and b.isdigit()):
            raise LowerToKernelsError(
                f"lower-to-kernels: bad symbolic entry '{item.strip()}'; expected batch or INPUT:AXIS,... such as 0:0"
            )
        out.append((int(a), int(b)))
    return out


def _check_schedule(fusion: FusionOp) -> None:
    """A ``fuser.schedule`` that ``read_schedule`` refuses is this pass's diagnostic
    (naming the fusion), before ``lower_segment`` reads it."""
    attr = fusion.attributes.get(SCHEDULE_ATTR)
    if attr is None:
        return
    try:
        read_schedule(attr)
    except ScheduleAttrError as e:
        raise LowerToKernelsError(
            f"lower-to-kernels: @{fusion.sym_name.data}: {SCHEDULE_ATTR}: {e}"
        ) from None
