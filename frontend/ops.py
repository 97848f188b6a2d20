"""``fd.ops``: every op of the ``fuser`` dialect under nvFuser's names and argument
orders.

Each method checks its arguments, builds the IR op (whose typed constructor infers
the result's extents and dtype), and records the call in canonical form: Python
numbers become ``define_scalar`` records first, optional arguments are spelled out.
So ``fd.ops.sum(t, 1)`` records ``T1 = fd.ops.sum(T0, dims=[1], keepdim=False,
dtype=DataType.Float)``, and replaying a canonical record records the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import TYPE_CHECKING, Any

from xdsl.ir import Operation

from fuser.frontend.building import (
    NvFuserCheckError,
    as_bools,
    as_int,
    as_ints,
    as_tensor,
    as_value,
    build,
    check_mine,
    fold,
    index_elems,
    is_number,
    mixed_sizes,
    new_scalar,
    new_tensor,
    new_value,
    new_vector,
    record,
    shape_elems,
    st,
)
from fuser.frontend.datatype import DataType, as_datatype
from fuser.frontend.state import Elem, Scalar, Tensor, Value, Vector
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN, fmt_shape, normalize_dim

if TYPE_CHECKING:
    from fuser.frontend.fusion_definition import FusionDefinition


def _known(v: Value) -> Any:
    return v.known if isinstance(v, Scalar) else None


class Operators:
    """The ``fd.ops`` namespace."""

    def __init__(self, fd: FusionDefinition) -> None:
        self._fd = fd

    # ---- helpers ------------------------------------------------------------------
    def _v(self, x: Any, opname: str, what: str) -> Value:
        return as_value(self._fd, x, opname, what)

    def _t(self, x: Any, opname: str, what: str = "input") -> Tensor:
        return as_tensor(self._fd, x, opname, what)

    def _emit(self, name: str, op: Operation, args: Sequence[Any], kwargs: Sequence[tuple[str, Any]] = (), known: Any = None) -> Any:
        outs = [new_value(self._fd, r, known) for r in op.results]
        record(self._fd, f"ops.{name}", args, kwargs, outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _elementwise(self, name: str, cls: type[Operation], operands: Sequence[Any]) -> Any:
        vals = [self._v(x, name, f"operand #{i}") for i, x in enumerate(operands)]
        op = build(self._fd, name, cls, *[v.value for v in vals])
        known = None
        if not isinstance(op.results[0].type, F.TensorType):
            known = fold(name, [_known(v) for v in vals], F.dtype_of(op.results[0].type), op)
        return self._emit(name, op, vals, known=known)

    @staticmethod
    def _dtype(dtype: Any, opname: str) -> DataType:
        try:
            return as_datatype(dtype)
        except ValueError as e:
            raise ValueError(f"{opname}: {e}") from None

    def _dims(self, t: Tensor, dims: Any, opname: str, what: str = "dims") -> list[int]:
        out = as_ints(dims, opname, what)
        for d in out:
            if not -max(t.ndim, 1) <= d < max(t.ndim, 1):
                raise ValueError(f"{opname}: dim {d} is out of range for rank {t.ndim}")
        return out

    # ---- elementwise with several operands ----------------------------------------
    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return self._elementwise("where", F.WhereOp, [cond, a, b])

    def clamp(self, x: Any, min: Any, max: Any) -> Any:  # noqa: A002 - nvFuser's names
        return self._elementwise("clamp", F.ClampOp, [x, min, max])

    def lerp(self, start: Any, end: Any, weight: Any) -> Any:
        return self._elementwise("lerp", F.LerpOp, [start, end, weight])

    def threshold(self, x: Any, threshold: Any, value: Any) -> Any:
        return self._elementwise("threshold", F.ThresholdOp, [x, threshold, value])

    def addcmul(self, x: Any, tensor1: Any, tensor2: Any, value: Any = 1.0) -> Any:
        return self._elementwise("addcmul", F.AddcmulOp, [x, tensor1, tensor2, value])

    def cast(self, x: Any, dtype: Any) -> Any:
        v = self._v(x, "cast", "input")
        dt = self._dtype(dtype, "cast")
        if dt.is_null:
            raise ValueError("cast: dtype must not be DataType.Null")
        op = build(self._fd, "cast", F.CastOp, v.value, dt.to_dtype())
        known = None
        if isinstance(v, Scalar) and v.known is not None:
            from fuser.frontend.building import convert_scalar

            value = v.known
            if isinstance(value, complex) and not dt.to_dtype().is_complex:
                value = value.real  # a cast to a real type drops the imaginary part
            try:
                known = convert_scalar(value, dt.to_dtype())
            except (ValueError, OverflowError):  # NaN or infinity to an integer: unknown
                known = None
        return self._emit("cast", op, [v], [("dtype", dt)], known=known)

    # ---- reductions -----------------------------------------------------------------
    def _reduction(self, name: str, x: Any, dims: Any, keepdim: bool, dtype: Any, dim: Any = None) -> Tensor:
        t = self._t(x, name)
        if dim is not None:  # nvFuser's single-axis overload: sum(t, dim=0)
            if dims is not None:
                raise ValueError(f"{name}: give dims or dim, not both")
            if not isinstance(dim, int) or isinstance(dim, bool):
                raise ValueError(f"{name}: dim must be an integer axis, got {dim!r}")
            dims = [dim]
        if isinstance(dims, DataType):  # sum(t, dtype): all axes
            dims, dtype = None, dims
        ds = list(range(t.ndim)) if dims is None else self._dims(t, dims, name)
        dt = self._dtype(dtype, name)
        ours = None if dt.is_null else dt.to_dtype()
        op = build(self._fd, name, F.REDUCTION_OP_CLASSES[name], t.value, ds, bool(keepdim), ours)
        res_dt = DataType.from_dtype(F.dtype_of(op.results[0].type))
        return self._emit(name, op, [t], [("dims", ds), ("keepdim", bool(keepdim)), ("dtype", res_dt)])

    def sum(
        self, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = DataType.Null, *, dim: Any = None
    ) -> Tensor:
        return self._reduction("sum", x, dims, keepdim, dtype, dim)

    def prod(
        self, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = DataType.Null, *, dim: Any = None
    ) -> Tensor:
        return self._reduction("prod", x, dims, keepdim, dtype, dim)

    def max(
        self, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = DataType.Null, *, dim: Any = None
    ) -> Tensor:
        return self._reduction("max", x, dims, keepdim, dtype, dim)

    def min(
        self, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = DataType.Null, *, dim: Any = None
    ) -> Tensor:
        return self._reduction("min", x, dims, keepdim, dtype, dim)

    def _var_args(self, name: str, x: Any, dims: Any, correction: Any) -> tuple[Tensor, list[int], float | int]:
        t = self._t(x, name)
        ds = list(range(t.ndim)) if dims is None else self._dims(t, dims, name)
        if not is_number(correction) or isinstance(correction, bool):
            raise ValueError(f"{name}: correction must be a number, got {correction!r}")
        corr = int(correction) if float(correction).is_integer() else float(correction)
        return t, ds, corr

    def var(self, x: Any, dims: Any = None, correction: Any = 1, keepdim: bool = False) -> Tensor:
        t, ds, corr = self._var_args("var", x, dims, correction)
        op = build(self._fd, "var", F.VarOp, t.value, ds, float(corr), bool(keepdim))
        return self._emit("var", op, [t], [("dims", ds), ("correction", corr), ("keepdim", bool(keepdim))])

    def var_mean(self, x: Any, dims: Any = None, correction: Any = 1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        t, ds, corr = self._var_args("var_mean", x, dims, correction)
        op = build(self._fd, "var_mean", F.VarMeanOp, t.value, ds, float(corr), bool(keepdim))
        return self._emit("var_mean", op, [t], [("dims", ds), ("correction", corr), ("keepdim", bool(keepdim))])

    def welford(self, x: Any, dims: Any) -> tuple[Tensor, Tensor, Tensor]:
        t = self._t(x, "welford")
        ds = self._dims(t, dims, "welford")
        op = build(self._fd, "welford", F.WelfordOp, t.value, ds)
        return self._emit("welford", op, [t], [("dims", ds)])

    # ---- shape ops ------------------------------------------------------------------
    def broadcast(self, x: Any, is_broadcast_dim: Any) -> Tensor:
        t = self._t(x, "broadcast")
        flags = as_bools(is_broadcast_dim, "broadcast", "is_broadcast_dim")
        op = build(self._fd, "broadcast", F.BroadcastOp, t.value, flags)
        return self._emit("broadcast", op, [t], [("is_broadcast_dim", flags)])

    def broadcast_in_dim(self, x: Any, shape: Any, broadcast_dims: Any) -> Tensor:
        name = "broadcast_in_dim"
        t = self._t(x, name)
        canon, elems = shape_elems(self._fd, shape, name, "shape")
        bdims = as_ints(broadcast_dims, name, "broadcast_dims")
        if len(bdims) != t.ndim:
            raise ValueError(f"{name}: broadcast_dims {bdims} has {len(bdims)} entries for input rank {t.ndim}")
        if any(not 0 <= d < len(elems) for d in bdims) or sorted(set(bdims)) != bdims:
            raise ValueError(f"{name}: broadcast_dims {bdims} must be increasing and within rank {len(elems)}")
        elems = self._fill_minus_one(t, elems, {d: i for i, d in enumerate(bdims)}, name)
        static, sizes = mixed_sizes(self._fd, elems)
        op = build(self._fd, name, F.BroadcastInDimOp, t.value, static, bdims, sizes)
        return self._emit(name, op, [t], [("shape", canon), ("broadcast_dims", bdims)])

    def _fill_minus_one(self, t: Tensor, elems: list[Elem], mapping: dict[int, int], opname: str) -> list[Elem]:
        """``-1`` in a target shape keeps the mapped input axis' extent."""
        out = []
        for j, e in enumerate(elems):
            if e.known == -1:
                if j not in mapping:
                    raise ValueError(f"{opname}: -1 at output axis {j} has no input axis to take its extent from")
                i = mapping[j]
                ext = t.static_shape[i]
                e = Elem(None, ext) if ext != DYN else Elem(self._size_value(t, i), None)
            elif e.known is not None and e.known < 0:
                raise ValueError(f"{opname}: negative extent {e.known}")
            out.append(e)
        return out

    def _size_value(self, t: Tensor, dim: int) -> Any:
        return build(self._fd, "size", F.SizeOp, t.value, dim).results[0]

    def expand(self, x: Any, shape: Any) -> Tensor:
        t = self._t(x, "expand")
        canon, elems = shape_elems(self._fd, shape, "expand", "shape")
        if len(elems) != t.ndim:
            raise ValueError(f"expand: shape has {len(elems)} entries for input rank {t.ndim}")
        elems = self._fill_minus_one(t, elems, {i: i for i in range(t.ndim)}, "expand")
        static, sizes = mixed_sizes(self._fd, elems)
        op = build(self._fd, "expand", F.ExpandOp, t.value, static, sizes)
        return self._emit("expand", op, [t], [("shape", canon)])

    def reshape(self, x: Any, new_shape: Any) -> Tensor:
        t = self._t(x, "reshape")
        canon, elems = shape_elems(self._fd, new_shape, "reshape", "new_shape")
        holes = [i for i, e in enumerate(elems) if e.known == -1]
        if len(holes) > 1:
            raise ValueError(f"reshape: only one -1 is allowed in new_shape, got {len(holes)}")
        if any(e.known is not None and e.known < -1 for e in elems):
            raise ValueError(f"reshape: negative extent in new_shape {[e.known for e in elems]}")
        in_shape = list(t.static_shape)
        known = [e.known for e in elems]
        if holes and DYN not in in_shape and None not in known:
            rest = prod(k for k in known if k != -1)
            total = prod(in_shape)
            if rest == 0 or total % rest:
                raise ValueError(f"reshape: cannot infer -1 in {known} from sizes {fmt_shape(in_shape)}")
            elems[holes[0]] = Elem(None, total // rest)
        elif holes:
            elems[holes[0]] = Elem(self._inferred_extent(t, elems, holes[0]), None)
        out = [e.known for e in elems]
        if DYN not in in_shape and None not in out and prod(in_shape) != prod(out):  # type: ignore[arg-type]
            raise ValueError(
                f"reshape: sizes {fmt_shape(in_shape)} ({prod(in_shape)} elements) and "
                f"{fmt_shape(out)} ({prod(out)} elements) do not multiply out"  # type: ignore[arg-type]
            )
        static, sizes = mixed_sizes(self._fd, elems)
        op = build(self._fd, "reshape", F.ReshapeOp, t.value, static, sizes)
        return self._emit("reshape", op, [t], [("new_shape", canon)])

    def _inferred_extent(self, t: Tensor, elems: list[Elem], hole: int) -> Any:
        """IR computing ``numel(t) / prod(other entries)`` for a ``-1`` entry."""
        fd = self._fd
        total = fd._state.constant(1, DType.int64)
        for i, e in enumerate(t.static_shape):
            ext = fd._state.constant(e, DType.int64) if e != DYN else self._size_value(t, i)
            total = build(fd, "reshape", F.BINARY_OP_CLASSES["mul"], total, ext).results[0]
        for i, e in enumerate(elems):
            if i != hole:
                total = build(fd, "reshape", F.BINARY_OP_CLASSES["div"], total, fd._state.elem_value(e)).results[0]
        return total

    def view(self, x: Any, original_shape: Any = None, new_shape: Any = None) -> Tensor:
        """The legacy spelling ``view(t, original_shape=, new_shape=)``; recorded as
        ``reshape``."""
        t = self._t(x, "view")
        if original_shape is not None:
            orig = as_ints(original_shape, "view", "original_shape")
            if len(orig) != t.ndim or any(s not in (DYN, o) for s, o in zip(t.static_shape, orig, strict=True)):
                raise ValueError(f"view: original_shape {orig} does not match {t.name} of sizes {fmt_shape(t.static_shape)}")
        if new_shape is None:
            raise ValueError("view: new_shape is required")
        return self.reshape(t, new_shape)

    def permute(self, x: Any, dims: Any) -> Tensor:
        t = self._t(x, "permute")
        ds = self._dims(t, dims, "permute")
        norm = [d % max(t.ndim, 1) for d in ds]
        if sorted(norm) != list(range(t.ndim)):
            raise ValueError(f"permute: dims {ds} is not a permutation of rank {t.ndim}")
        op = build(self._fd, "permute", F.PermuteOp, t.value, ds)
        return self._emit("permute", op, [t], [("dims", ds)])

    def squeeze(self, x: Any, dims: Any) -> Tensor:
        t = self._t(x, "squeeze")
        ds = self._dims(t, dims, "squeeze")
        for d in ds:
            ext = t.static_shape[normalize_dim(d, t.ndim)]
            if ext not in (1, DYN):
                raise ValueError(f"squeeze: cannot squeeze dim {d} of extent {ext} (sizes {fmt_shape(t.static_shape)})")
        op = build(self._fd, "squeeze", F.SqueezeOp, t.value, ds)
        return self._emit("squeeze", op, [t], [("dims", ds)])

    def slice(
        self,
        x: Any,
        start_indices: Any = None,
        end_indices: Any = None,
        strides: Any = None,
        manual_normalization: Any = False,
        *,
        starts: Any = None,
        ends: Any = None,
    ) -> Tensor:
        """nvFuser's ``slice``: ``x[start:end]`` per axis, step 1; the bounds are lists
        of ints and scalars, or vectors (``define_vector``, ``T.shape()``).

        nvFuser's checks, in its order and with its text (``NvFuserCheckError``): the
        lengths (strides against starts, the tensor's rank against starts, starts
        against ends), then per axis a constant start must be >= 0, a constant end >= a
        constant start, and every stride the constant 1. Bounds are normalized as
        Python's (a negative bound known only at run time counts from the end; both are
        clamped to the extent), unless ``manual_normalization`` says the caller did it:
        then they must already lie in order in ``[0, extent]`` (a ValueError naming the
        operand, where nvFuser would read out of bounds). A bound known only at run
        time gives a ``fuser.dynamic_slice``; ``execute`` concretizes it per input
        values into a static ``fuser.slice``."""
        name = "slice"
        fd = self._fd
        t = self._t(x, name)
        manual = _flag(manual_normalization, name, "manual_normalization")
        start_indices = start_indices if start_indices is not None else starts
        end_indices = end_indices if end_indices is not None else ends
        if start_indices is None or end_indices is None:
            raise ValueError("slice: start_indices and end_indices are required")
        ca, a = index_elems(fd, start_indices, name, "start_indices")
        cb, b = index_elems(fd, end_indices, name, "end_indices")
        if strides is None:
            cs: Any = [1] * len(a)
            s = [Elem(None, 1) for _ in a]
        else:
            cs, s = index_elems(fd, strides, name, "strides")
            if len(s) != len(a):
                raise NvFuserCheckError(
                    f"slice: Slice start_indices and strides don't match! Start Indices: {len(a)} "
                    f"Strides: {len(s)}"
                )
        if t.ndim != len(a):
            raise NvFuserCheckError(
                "slice: Number of tensor dimensions does not match slice dimensions! "
                f"Tensor-dims: {t.ndim} Slice-dims: {len(a)}"
            )
        if len(a) != len(b):
            raise NvFuserCheckError(
                f"slice: Slice indexing attribute dimensions don't match! Start Indices: {len(a)} "
                f"End Indices: {len(b)}"
            )
        # nvFuser checks constants; values bound while concretizing are normalized.
        constants = st(fd).bindings is None
        for lo, hi, step in zip(a, b, s, strict=True):
            if constants and lo.known is not None and lo.known < 0:
                raise NvFuserCheckError(
                    "slice: Slice operation start_indices must be greater than or equal to 0. "
                    f"Start Indices: {lo.known}"
                )
            if constants and lo.known is not None and hi.known is not None and hi.known < lo.known:
                raise NvFuserCheckError(
                    "slice: Slice operation end_indices must be greater than or equal to "
                    f"start_indices. Start Indices: {lo.known} End Indices: {hi.known}"
                )
            if step.known != 1:
                raise NvFuserCheckError(
                    "slice: nvFuser Limitation: All slice operation strides must be of const "
                    "size 1."
                )
        kwargs: list[tuple[str, Any]] = [
            ("start_indices", ca),
            ("end_indices", cb),
            ("strides", cs),
        ]
        if manual:
            kwargs.append(("manual_normalization", True))
        if any(e.known is None for e in a + b):
            elem = st(fd).elem_value
            los, his = [elem(e) for e in a], [elem(e) for e in b]
            op = build(fd, name, F.DynamicSliceOp, t.value, los, his)
            return self._emit(name, op, [t], kwargs)
        bounds = [
            _slice_bounds(i, ext, lo.known, hi.known, manual, (ca, cb))  # type: ignore[arg-type]
            for i, (ext, lo, hi) in enumerate(zip(t.static_shape, a, b, strict=True))
        ]
        lows, highs = [lo for lo, _ in bounds], [hi for _, hi in bounds]
        op = build(fd, name, F.SliceOp, t.value, lows, highs, [1] * len(bounds))
        return self._emit(name, op, [t], kwargs)

    def strided_slice(self, x: Any, start_indices: Any, end_indices: Any, strides: Any) -> Tensor:
        """fuser's extension (nvFuser's ``slice`` takes only stride 1):
        ``x[start:end:stride]`` per axis with integer bounds and positive strides, by
        Python's rules (a negative bound counts from the end; bounds are clamped)."""
        name = "strided_slice"
        t = self._t(x, name)
        a = as_ints(start_indices, name, "start_indices")
        b = as_ints(end_indices, name, "end_indices")
        s = as_ints(strides, name, "strides")
        if not len(a) == len(b) == len(s) == t.ndim:
            raise ValueError(
                f"{name}: start_indices, end_indices and strides need {t.ndim} entries each "
                f"(got {len(a)}, {len(b)}, {len(s)})"
            )
        op = build(self._fd, name, F.SliceOp, t.value, a, b, s)
        return self._emit(name, op, [t], [("start_indices", a), ("end_indices", b), ("strides", s)])

    def pad(self, x: Any, pad_widths: Any, value: Any = None) -> Tensor:
        """nvFuser's ``pad``: ``pad_widths`` in torch.nn.functional.pad order (pairs
        ``(before, after)`` from the last axis; negative widths crop), ints and scalars
        or a vector; ``value`` defaults to 0. Widths known only at run time give a
        ``fuser.dynamic_pad``; ``execute`` concretizes it per input values into a static
        ``fuser.pad``."""
        fd = self._fd
        t = self._t(x, "pad")
        canon, w = index_elems(fd, pad_widths, "pad", "pad_widths")
        if len(w) > 2 * t.ndim:
            raise NvFuserCheckError(
                "pad: Number of pad widths must be at most twice the input dimension "
                f"(got {len(w)} widths for {t.name} of rank {t.ndim})"
            )
        if value is None:
            pv = st(fd).constant(0, t.type.dtype)
            canon_value: Any = None
        else:
            v = self._v(value, "pad", "value")
            if not isinstance(v, Scalar):
                raise ValueError(f"pad: value must be a scalar, got tensor {v.name}")
            pv, canon_value = v.value, v
        if any(e.known is None for e in w):
            op = build(fd, "pad", F.DynamicPadOp, t.value, [st(fd).elem_value(e) for e in w], pv)
        else:
            widths = [int(e.known) for e in w]  # type: ignore[arg-type]
            try:
                op = build(fd, "pad", F.PadOp, t.value, widths, pv)
            except ValueError as e:
                if st(fd).bindings is None:
                    raise
                # Concretizing: say which operand gave these widths.
                src = _describe_indices(canon)
                raise ValueError(f"{e} (pad_widths {src} = {widths} at these inputs)") from None
        return self._emit("pad", op, [t, canon, canon_value])

    def cat(self, tensors: Any, dim: Any = 0, manual_padding: Any = False) -> Tensor:
        if _flag(manual_padding, "cat", "manual_padding"):
            raise ValueError("cat: manual_padding=True (inputs padded by the caller) is not supported")
        if not isinstance(tensors, list | tuple) or not tensors:
            raise ValueError("cat: tensors must be a non-empty list of tensors")
        ts = [self._t(x, "cat", f"tensor #{i}") for i, x in enumerate(tensors)]
        d = as_int(dim, "cat", "dim")
        self._dims(ts[0], [d], "cat", "dim")
        op = build(self._fd, "cat", F.CatOp, [x.value for x in ts], d)
        return self._emit("cat", op, [ts], [("dim", d)])

    # ---- indexing -------------------------------------------------------------------
    def _indexing(self, name: str, cls: type[Operation], x: Any, index: Any, dim: Any) -> Tensor:
        t = self._t(x, name)
        idx = self._v(index, name, "index") if name == "select" else self._t(index, name, "index")
        d = as_int(dim, name, "dim")
        self._dims(t, [d], name, "dim")
        op = build(self._fd, name, cls, t.value, idx.value, d)
        return self._emit(name, op, [t, idx], [("dim", d)])

    def gather(self, x: Any, index: Any, dim: Any) -> Tensor:
        return self._indexing("gather", F.GatherOp, x, index, dim)

    def take_along_axis(self, x: Any, index: Any, dim: Any) -> Tensor:
        return self._indexing("take_along_axis", F.TakeAlongAxisOp, x, index, dim)

    def index_select(self, x: Any, index: Any, dim: Any) -> Tensor:
        return self._indexing("index_select", F.IndexSelectOp, x, index, dim)

    def select(self, x: Any, index: Any, dim: Any) -> Tensor:
        return self._indexing("select", F.SelectOp, x, index, dim)

    def scatter(self, arg1: Any, index: Any, src: Any, dim: Any) -> Tensor:
        """nvFuser's ``scatter`` (``torch.scatter``): ``arg1`` with the entries ``index``
        names along ``dim`` replaced by ``src`` (a tensor of ``arg1``'s dtype and rank,
        or a scalar)."""
        name = "scatter"
        t = self._t(arg1, name, "arg1")
        i = self._t(index, name, "index")
        s = self._v(src, name, "src")
        d = as_int(dim, name, "dim")
        if isinstance(s, Tensor) and not t.ndim == i.ndim == s.ndim:
            raise ValueError(
                f"{name}: Tensor arguments have different dimensions {t.ndim}, {i.ndim} and {s.ndim}"
            )
        n = t.ndim
        if not -n <= d < n:
            raise ValueError(
                f"{name}: Tensor arguments have dimension {n} so dim argument must satisfy "
                f"{-n} <= dim < {n}, but received {d}"
            )
        op = build(self._fd, name, F.ScatterOp, t.value, i.value, s.value, d)
        return self._emit(name, op, [t, i, s], [("dim", d)])

    def cumsum(self, x: Any, dim: Any) -> Tensor:
        """nvFuser's ``cumsum``: inclusive prefix sums along ``dim`` (the input's dtype)."""
        t = self._t(x, "cumsum")
        d = as_int(dim, "cumsum", "dim")
        op = build(self._fd, "cumsum", F.CumsumOp, t.value, d)
        return self._emit("cumsum", op, [t], [("dim", d)])

    def matmul(self, arg1: Any, arg2: Any) -> Tensor:
        """nvFuser's ``matmul``: ``torch.matmul``'s shape rules on two tensors of one
        floating dtype; a library (cuBLAS) runs it in a segment of its own."""
        a, b = self._t(arg1, "matmul", "arg1"), self._t(arg2, "matmul", "arg2")
        op = build(self._fd, "matmul", F.MatmulOp, a.value, b.value)
        return self._emit("matmul", op, [a, b])

    def linear(self, arg1: Any, arg2: Any, bias: Any = None) -> Tensor:
        """nvFuser's ``linear``: ``arg1 @ arg2.T + bias`` (``torch.nn.functional.linear``);
        a library (cuBLAS) runs it in a segment of its own."""
        x, w = self._t(arg1, "linear", "arg1"), self._t(arg2, "linear", "arg2")
        if bias is None:
            op = build(self._fd, "linear", F.LinearOp, x.value, w.value)
            return self._emit("linear", op, [x, w])
        b = self._t(bias, "linear", "bias")
        op = build(self._fd, "linear", F.LinearOp, x.value, w.value, b.value)
        return self._emit("linear", op, [x, w], [("bias", b)])

    def triu(self, x: Any, diagonal: Any = 0) -> Tensor:
        """nvFuser's ``triu``: ``x`` with the elements below the ``diagonal``-th diagonal
        of its last two axes set to zero (``torch.triu``). A composite, as in nvFuser:
        ``where(col - row >= diagonal, x, 0)`` from two ``iota``s; one record, so the
        printed definition shows ``fd.ops.triu``."""
        name = "triu"
        t = self._t(x, name)
        d = as_int(diagonal, name, "diagonal")
        if t.ndim < 2:
            raise ValueError(f"triu: input {t.name} must have at least 2 dimensions, got {t.ndim}")
        s = st(self._fd)
        n_states, n_records = len(s.states), len(s.records)
        rows = self.iota(self.size(t, -2), dtype=DataType.Int)
        cols = self.iota(self.size(t, -1), dtype=DataType.Int)
        offset = self.sub(self.broadcast(cols, [True, False]), self.broadcast(rows, [False, True]))
        keep = self.ge(offset, d)
        keep = self.broadcast(keep, [True] * (t.ndim - 2) + [False, False])
        zero = False if t.dtype is DataType.Bool else 0
        res = self.where(keep, t, zero)
        # The steps are one op of the definition: drop their states and records.
        del s.states[n_states:], s.records[n_records:]
        return self._emit(name, res.value.owner, [t], [("diagonal", d)])

    # ---- factories and sizes --------------------------------------------------------
    def iota(self, length: Any, start: Any = None, step: Any = None, dtype: Any = DataType.Int) -> Tensor:
        dt = self._dtype(dtype, "iota")
        if dt.is_null or dt is DataType.Bool:
            raise ValueError(f"iota: dtype must be a number type, got {dt!r}")
        n = self._v(length, "iota", "length")
        if not isinstance(n, Scalar) or not F.dtype_of(n.value.type).is_integer:
            raise ValueError(f"iota: length must be an integer scalar, got {n.name}")
        parts: list[Any] = []
        for what, v, default in (("start", start, 0), ("step", step, 1)):
            if v is None:
                parts.append((None, st(self._fd).constant(default, dt.to_dtype())))
            else:
                s = self._v(v, "iota", what)
                if not isinstance(s, Scalar):
                    raise ValueError(f"iota: {what} must be a scalar, got tensor {s.name}")
                parts.append((s, s.value))
        static = DYN if n.known is None else int(n.known)
        if static < DYN:
            raise ValueError(f"iota: length {static} is negative")
        op = build(self._fd, "iota", F.IotaOp, n.value, parts[0][1], parts[1][1], dt.to_dtype(), static)
        return self._emit("iota", op, [n, parts[0][0], parts[1][0]], [("dtype", dt)])

    def full(self, shape: Any, fill_value: Any, dtype: Any) -> Tensor:
        dt = self._dtype(dtype, "full")
        if dt.is_null:
            raise ValueError("full: dtype must not be DataType.Null")
        canon, elems = shape_elems(self._fd, shape, "full", "shape")
        if any(e.known is not None and e.known < 0 for e in elems):
            raise ValueError(f"full: negative extent in shape {[e.known for e in elems]}")
        v = self._v(fill_value, "full", "fill_value")
        if not isinstance(v, Scalar):
            raise ValueError(f"full: fill_value must be a scalar, got tensor {v.name}")
        static, sizes = mixed_sizes(self._fd, elems)
        op = build(self._fd, "full", F.FullOp, v.value, static, dt.to_dtype(), sizes)
        return self._emit("full", op, [], [("shape", canon), ("fill_value", v), ("dtype", dt)])

    def uniform(
        self, minval: Any, maxval: Any, shape: Any, *, rng_seed: Any = None, rng_offset: Any = None,
        dtype: Any = DataType.Float,
    ) -> Tensor:
        """nvFuser's ``uniform``: a new tensor of values uniform in ``[minval, maxval)``
        (Philox4x32-10, ``fuser_ir/philox.py``). With ``rng_seed`` and ``rng_offset``
        (Int scalars) the values are a function of them; without, every execution
        draws a new seed/offset from torch's generator, as nvFuser does."""
        return self._random("uniform", F.UniformOp, ("minval", "maxval"), minval, maxval, shape, rng_seed, rng_offset, dtype)

    def normal(
        self, mean: Any, std: Any, shape: Any, *, rng_seed: Any = None, rng_offset: Any = None,
        dtype: Any = DataType.Float,
    ) -> Tensor:
        """nvFuser's ``normal``: a new tensor of normal values (Box-Muller on Philox
        uniforms); ``rng_seed``/``rng_offset`` as for ``uniform``."""
        return self._random("normal", F.NormalOp, ("mean", "std"), mean, std, shape, rng_seed, rng_offset, dtype)

    def rand_like(self, x: Any, *, rng_seed: Any = None, rng_offset: Any = None) -> Tensor:
        """nvFuser's ``rand_like``: ``uniform(0, 1)`` of ``x``'s shape and dtype (a
        floating point tensor); one record."""
        return self._random_like("rand_like", self.uniform, x, rng_seed, rng_offset)

    def randn_like(self, x: Any, *, rng_seed: Any = None, rng_offset: Any = None) -> Tensor:
        """nvFuser's ``randn_like``: ``normal(0, 1)`` of ``x``'s shape and dtype."""
        return self._random_like("randn_like", self.normal, x, rng_seed, rng_offset)

    def _random_like(self, name: str, fn: Any, x: Any, rng_seed: Any, rng_offset: Any) -> Tensor:
        t = self._t(x, name)
        if t.dtype not in (DataType.Double, DataType.Float, DataType.Half, DataType.BFloat16):
            raise ValueError(f"{name}: input must have floating point type, but got {t.dtype!r}")
        if (rng_seed is None) != (rng_offset is None):
            raise ValueError(f"{name}: rng_seed and rng_offset must be provided together")
        kwargs: list[tuple[str, Any]] = []
        if rng_seed is not None:
            kwargs = [
                ("rng_seed", self._v(rng_seed, name, "rng_seed")),
                ("rng_offset", self._v(rng_offset, name, "rng_offset")),
            ]
        s = st(self._fd)
        n_states, n_records = len(s.states), len(s.records)
        res = fn(0.0, 1.0, self.shape(t), dtype=t.dtype, **dict(kwargs))
        # One op of the definition, as in nvFuser: drop the steps' states and records.
        del s.states[n_states:], s.records[n_records:]
        return self._emit(name, res.value.owner, [t], kwargs)

    def _random(
        self, name: str, cls: type[F._RandomOp], what: tuple[str, str], a: Any, b: Any, shape: Any,
        rng_seed: Any, rng_offset: Any, dtype: Any,
    ) -> Tensor:
        dt = self._dtype(dtype, name)
        if dt not in (DataType.Double, DataType.Float, DataType.Half, DataType.BFloat16):
            raise ValueError(f"{name}: random distributions only create floating point types, got {dt!r}")
        params: list[Scalar] = []
        for w, x in zip(what, (a, b), strict=True):
            v = self._v(x, name, w)
            if not isinstance(v, Scalar):
                raise ValueError(f"{name}: {w} must be a scalar, got tensor {v.name}")
            if v.dtype in (DataType.Bool, DataType.ComplexFloat, DataType.ComplexDouble):
                raise ValueError(f"{name}: {w} must be a real number scalar, got {v.name} of {v.dtype!r}")
            params.append(v)
        canon, elems = shape_elems(self._fd, shape, name, "shape")
        if any(e.known is not None and e.known < 0 for e in elems):
            raise ValueError(f"{name}: negative extent in shape {[e.known for e in elems]}")
        if (rng_seed is None) != (rng_offset is None):
            raise ValueError(f"{name}: rng_seed and rng_offset must be provided together")
        kwargs: list[tuple[str, Any]] = [("shape", canon)]
        if rng_seed is not None:
            given: list[Scalar] = []
            for w, x in (("rng_seed", rng_seed), ("rng_offset", rng_offset)):
                v = self._v(x, name, w)
                if not isinstance(v, Scalar) or v.dtype is not DataType.Int:
                    kind = f"tensor {v.name}" if not isinstance(v, Scalar) else f"{v.name} of {v.dtype!r}"
                    raise ValueError(f"{name}: {w} must be an Int scalar, got {kind}")
                given.append(v)
                kwargs.append((w, v))
            seed, offset = given[0].value, given[1].value
        else:
            seed, offset = self._hidden_rng(name)
        static, sizes = mixed_sizes(self._fd, elems)
        op = build(self._fd, name, cls, params[0].value, params[1].value, seed, offset, static, dt.to_dtype(), sizes)
        kwargs.append(("dtype", dt))
        return self._emit(name, op, params, kwargs)

    def _hidden_rng(self, name: str) -> tuple[Any, Any]:
        """The seed and offset of the next random op without ``rng_seed``/``rng_offset``:
        the hidden i64 inputs (created on first use, last among the block arguments),
        the ``k``-th op at ``offset + k`` (nvFuser's numbering)."""
        s = st(self._fd)
        if not s.rng:
            s.rng = [s.block.insert_arg(DType.int64.to_xdsl(), len(s.block.args)) for _ in range(2)]
        seed, offset = s.rng
        k = s.rng_ops
        s.rng_ops += 1
        if k == 0:
            return seed, offset
        step = s.constant(k, DType.int64)
        return seed, build(self._fd, name, F.BINARY_OP_CLASSES["add"], offset, step).results[0]

    def size(self, x: Any, dim: Any) -> Scalar:
        t = self._t(x, "size")
        d = as_int(dim, "size", "dim")
        self._dims(t, [d], "size", "dim")
        op = build(self._fd, "size", F.SizeOp, t.value, d)
        ext = t.static_shape[normalize_dim(d, t.ndim)]
        return self._emit("size", op, [t], [("dim", d)], known=None if ext == DYN else ext)

    def shape(self, x: Any) -> Vector:
        t = self._t(x, "shape")
        elems = [
            Elem(None, e) if e != DYN else Elem(self._size_value(t, i), None)
            for i, e in enumerate(t.static_shape)
        ]
        v = new_vector(self._fd, elems)
        record(self._fd, "ops.shape", [t], [], [v])
        return v

    def stride_order(self, x: Any, stride_order: Any) -> Tensor:
        """nvFuser's ``stride_order``: a copy of ``x`` allocated in ``stride_order`` (the
        rank of each axis's stride, 0 innermost). Values are unchanged, so no IR op is
        built: the new tensor shares ``x``'s value and carries the order, which
        ``add_output`` gives the fusion output's type (as nvFuser's allocation domain)."""
        t = self._t(x, "stride_order")
        order = as_ints(stride_order, "stride_order", "stride_order")
        if len(order) != t.ndim:
            raise ValueError(
                f"stride_order: stride_order {order} must have one entry per axis of {t.name} (rank {t.ndim})"
            )
        if sorted(order) != list(range(t.ndim)):
            raise ValueError(
                f"stride_order: stride_order {order} is not a permutation of 0..{t.ndim - 1}"
            )
        out = new_tensor(self._fd, t.value)
        out.stride_order = tuple(order)
        record(self._fd, "ops.stride_order", [t], [("stride_order", order)], [out])
        return out

    def at(self, v: Any, index: Any) -> Scalar:
        if not isinstance(v, Vector):
            raise ValueError(f"at: expected a vector, got {v!r}")
        check_mine(self._fd, v, "at")
        i = as_int(index, "at", "index")
        if not -len(v) <= i < len(v):
            raise ValueError(f"at: index {i} is out of range for {v.name} of length {len(v)}")
        e = v.elements[i]
        s = new_scalar(self._fd, st(self._fd).elem_value(e), e.known)
        record(self._fd, "ops.at", [v], [("index", i)], [s])
        return s


def _unary(name: str) -> Any:
    cls = F.UNARY_OP_CLASSES[name]

    def method(self: Operators, x: Any) -> Any:
        return self._elementwise(name, cls, [x])

    method.__name__ = name
    method.__doc__ = cls.__doc__
    return method


def _slice_bounds(
    axis: int, extent: int, start: int, end: int, manual: bool, operands: tuple[Any, Any]
) -> tuple[int, int]:
    """The static bounds of ``slice`` on one axis (nvFuser's normalization). On a
    symbolic axis the bounds stay as given (``fuser.slice`` clamps them at run time)."""
    if extent == DYN:
        return start, end
    if not manual:
        return F.DynamicSliceOp.normalize(extent, start, end)
    if start == 0 and end >= 0:  # nvFuser clamps this common case even so
        end = min(end, extent)
    if not 0 <= start <= end <= extent:
        ca, cb = operands
        raise ValueError(
            f"slice: with manual_normalization=True the bounds must lie in order in "
            f"[0, {extent}] (axis {axis}), got [{start}:{end}] from start_indices "
            f"{_entry(ca, axis)} and end_indices {_entry(cb, axis)}"
        )
    return start, end


def _describe_indices(canon: Any) -> str:
    """A canonical index argument as the definition names it (``V5``, ``[S1, 2]``)."""
    if isinstance(canon, Vector):
        return canon.name
    return "[" + ", ".join(_entry(canon, i) for i in range(len(canon))) + "]"


def _entry(canon: Any, i: int) -> str:
    """Where entry ``i`` of a canonical index argument comes from, for errors."""
    if isinstance(canon, Vector):
        return f"{canon.name}[{i}]"
    e = canon[i]
    return e.name if isinstance(e, Scalar) else repr(e)


def _flag(value: Any, opname: str, what: str) -> bool:
    """A bool option that nvFuser also takes as 0/1."""
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise ValueError(f"{opname}: {what} must be a bool, got {value!r}")


def _binary(name: str) -> Any:
    cls = F.BINARY_OP_CLASSES[name]

    def method(self: Operators, a: Any, b: Any) -> Any:
        return self._elementwise(name, cls, [a, b])

    method.__name__ = name
    method.__doc__ = cls.__doc__
    return method


for _name in F.UNARY_OP_CLASSES:
    setattr(Operators, _name, _unary(_name))
for _name in F.BINARY_OP_CLASSES:
    setattr(Operators, _name, _binary(_name))
