"""Random fusions for property tests: a FusionDefinition and its torch mirror.

``random_case(seed)`` builds a fusion of 2-12 ops drawn from the families nvFuser users
write (pointwise unary/binary, scalars, reductions with and without keepdim, var and
var_mean, broadcast_in_dim, reshape, permute, strided slice, casts) over f32/f16/bf16
inputs with size-1 and odd extents. Every op is applied at the same time to torch CPU
tensors, so the case carries the expected outputs (values and dtypes) as torch
computes them; torch is the oracle for type promotion.

A second, independent random stream (so that the fusions above stay what they were
for each seed) adds the later families to some cases: ops nothing uses,
``index_select`` and ``cat`` fed by reductions, float64 inputs and zero-dim tensors in
binary ops (torch's three promotion classes). A third stream adds bool and int32
tensors to about a third of the cases (``_int_bool``: comparisons, ``where``, int32
inputs and arithmetic, int64 sums), a fourth a ``pad``, the ``cat`` of a transposed
tensor or a float32 ``matmul`` with a new input (``_resize_or_library``: resizes next
to transposes, library segments between generated ones) to another third, and a
fifth stream an output written in place into an input of its shape and dtype to about
a quarter (``_in_place_update``; ``Case.updates`` holds the input's expected value
after a call).

Sums of 16-bit floats are computed for the oracle in float32 and rounded once
(``torch_sum``), as fuser and nvFuser define them.

``random_case(seed, small=True)`` draws from the same stream with small extents
(``SMALL_EXTENTS``): the cases whose generated kernels the CPU kernel interpreter runs.

The generator is deterministic in its seed; ``Case.source`` is a Python script that
rebuilds the fusion, printed by failing tests as a reproducer. Binary ops pair
operands whose extents agree, or where the smaller is a broadcast in the fusion's
types (static extent 1): a symbolic axis that happens to be 1 does not broadcast.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from fuser import DataType, FusionDefinition

DTYPES: dict[str, tuple[Any, torch.dtype]] = {
    "f32": (DataType.Float, torch.float32),
    "f16": (DataType.Half, torch.float16),
    "bf16": (DataType.BFloat16, torch.bfloat16),
}
MORE_DTYPES: dict[str, tuple[Any, torch.dtype]] = {
    "f64": (DataType.Double, torch.float64),
    "i64": (DataType.Int, torch.int64),
    "i32": (DataType.Int32, torch.int32),
}
TORCH_TO_NAME = {v[1]: k for k, v in (DTYPES | MORE_DTYPES).items()}
# Comparison tolerance of a value: the loosest over the dtypes it was computed through.
TOL = {torch.float64: 1e-4, torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 5e-2}
EXTRA_SALT = 0x9E3779B1  # the second random stream (later families) of a seed
INT_BOOL_SALT = 0x85EBCA77  # the third (the int/bool family), so earlier draws stay put
RESIZE_SALT = 0xC2B2AE35  # the fourth (pads, cats of transposes, matmuls)
IN_PLACE_SALT = 0x27D4EB2F  # the fifth (an output written in place into an input)
EXTENTS = (1, 1, 2, 3, 5, 7, 8, 16, 17, 32, 33, 64, 127, 128, 256)
# The extents of the small cases (``random_case(seed, small=True)``) whose kernels the
# CPU kernel interpreter runs: ``EXTENTS`` with 64, 127, 128 and 256 replaced by 4, 9, 6
# and 11, index for index, so a seed's small case is its fusion whenever no extent above
# 33 is drawn, and otherwise takes the same choices up to the first draw that depends on
# a replaced extent (size-1, odd and even extents, and warp-sized 32/33, all stay).
SMALL_EXTENTS = (1, 1, 2, 3, 5, 7, 8, 16, 17, 32, 33, 4, 9, 6, 11)
# Unary ops that are defined (finite or inf/nan in the same way as torch) everywhere.
UNARY = ("neg", "abs", "exp", "tanh", "sigmoid", "relu", "sin", "cos", "silu", "erf", "floor")
BINARY = ("add", "sub", "mul", "maximum", "minimum")
ABS_TO_REL = ("sin", "cos", "exp")
"""Unary ops whose output error is their input's absolute error (``x.tol * |x|``)."""


@dataclass
class Node:
    """A tensor of the fusion with its torch value (CPU) and its line in the source."""

    fd_value: Any
    torch_value: torch.Tensor
    name: str
    tol: float = 0.0
    """Comparison tolerance: the loosest of the dtypes it was computed through."""


def torch_sum(t: torch.Tensor, dim: list[int] | None = None, keepdim: bool = False) -> torch.Tensor:
    """``torch.sum`` as fuser and nvFuser define a sum: 16-bit floats accumulate in
    float32 and the result is rounded once. torch's CPU kernel for them is not exact
    enough to be the oracle: a bf16 sum of 69088 elements whose exact value rounds to
    4.53125 came out 5.125 (random fusion seed 3130), which fuser's GPU kernels (and
    torch's on the GPU) compute right."""
    wide = t.float() if t.dtype in (torch.float16, torch.bfloat16) else t
    out = torch.sum(wide) if dim is None else torch.sum(wide, dim=dim, keepdim=keepdim)
    return out if wide is t else out.to(t.dtype)


@dataclass
class Case:
    seed: int
    fd: FusionDefinition
    inputs: list[torch.Tensor]
    expected: list[torch.Tensor]
    source: str
    ops: list[str] = field(default_factory=list)
    tolerances: list[float] = field(default_factory=list)
    """Per expected output, the tolerance of its comparison with torch."""
    updates: list[tuple[int, torch.Tensor, float]] = field(default_factory=list)
    """Inputs the fusion writes in place (``add_output(t, alias_input=x)``): (input
    index, its value after a call, tolerance). A call changes those inputs, so each
    call gets its own copies (``numpy_inputs`` copies)."""

    def numpy_inputs(self) -> list[np.ndarray]:
        """The inputs as numpy arrays (bfloat16 through ml_dtypes), copies of
        ``inputs`` (a call may update them in place)."""
        import ml_dtypes

        out = []
        for t in self.inputs:
            if t.dtype == torch.bfloat16:
                out.append(t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy())
            else:
                out.append(t.numpy().copy())
        return out


class _Builder:
    def __init__(self, seed: int, extents: tuple[int, ...] = EXTENTS) -> None:
        self.rng = random.Random(seed)
        self.extents = extents
        self.lines: list[str] = []
        self.nodes: list[Node] = []
        self.ops: list[str] = []
        self.count = 0
        self.n_inputs = 0

    def fresh(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def emit(
        self, fd_value: Any, torch_value: torch.Tensor, line: str, parents: tuple[Node, ...] = ()
    ) -> Node:
        name = self.fresh()
        self.lines.append(f"    {name} = {line}")
        tol = max([TOL.get(torch_value.dtype, 0.0), *(p.tol for p in parents)])
        node = Node(fd_value, torch_value, name, tol)
        self.nodes.append(node)
        return node

    def pick(self) -> Node:
        # favour recent tensors so chains get long
        n = len(self.nodes)
        i = min(n - 1, int(n * (1 - self.rng.random() ** 2)))
        return self.nodes[i]


def _random_shape(rng: random.Random, extents: tuple[int, ...] = EXTENTS) -> list[int]:
    rank = rng.choice((1, 2, 2, 2, 3, 3))
    return [rng.choice(extents) for _ in range(rank)]


def _random_tensor(rng: random.Random, shape: list[int], dtype: torch.dtype) -> torch.Tensor:
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    return (torch.rand(shape, generator=gen, dtype=torch.float32) * 4 - 2).to(dtype)


def random_case(seed: int, min_ops: int = 2, max_ops: int = 12, small: bool = False) -> Case:
    """A random fusion with its inputs and torch's outputs (deterministic in ``seed``);
    ``small``: its extents are drawn from ``SMALL_EXTENTS`` (cases cheap enough for the
    CPU kernel interpreter)."""
    b = _Builder(seed, SMALL_EXTENTS if small else EXTENTS)
    rng = b.rng
    base = _random_shape(rng, b.extents)
    fd = FusionDefinition()
    inputs: list[torch.Tensor] = []
    with fd:
        for i in range(rng.choice((1, 1, 2, 2, 3))):
            if i == 0:
                shape = list(base)
            else:
                # same shape, or size-1 in some axes (broadcast), or a new shape
                r = rng.random()
                if r < 0.6:
                    shape = list(base)
                elif r < 0.8:
                    shape = [e if rng.random() < 0.5 else 1 for e in base]
                else:
                    shape = _random_shape(rng, b.extents)
            dname = rng.choice(tuple(DTYPES))
            dt, tdt = DTYPES[dname]
            value = _random_tensor(rng, shape, tdt)
            sym = [1 if e == 1 else -1 for e in shape]
            contig = [True if e != 1 else None for e in shape]
            t = fd.define_tensor(shape=sym, contiguity=contig, dtype=dt)
            inputs.append(value)
            b.emit(
                t,
                value,
                f"fd.define_tensor(shape={sym}, contiguity={contig}, dtype=DataType.{dt.name})",
            )
            b.n_inputs += 1
        n_ops = rng.randint(min_ops, max_ops)
        for _ in range(n_ops * 3):
            if len(b.ops) >= n_ops:
                break
            _random_op(fd, b)
        outs = _pick_outputs(b)
        # later families, from their own random stream
        main_rng, b.rng = b.rng, random.Random(seed ^ EXTRA_SALT)
        outs += _extra_families(fd, b, inputs)
        b.rng = random.Random(seed ^ INT_BOOL_SALT)
        if b.rng.random() < 0.35:
            node = _int_bool(fd, b, inputs)
            if node is not None:
                b.ops.append("int_bool")
                outs.append(node)
        b.rng = random.Random(seed ^ RESIZE_SALT)
        if b.rng.random() < 0.35:
            node = _resize_or_library(fd, b, inputs)
            if node is not None:
                outs.append(node)
        b.rng = main_rng
        for node in outs:
            fd.add_output(node.fd_value)
            b.lines.append(f"    fd.add_output({node.name})")
        b.rng = random.Random(seed ^ IN_PLACE_SALT)
        updates = _in_place_update(fd, b, inputs) if b.rng.random() < 0.3 else []
        b.rng = main_rng
    src = "\n".join(
        [
            "from fuser import DataType, FusionDefinition",
            "with FusionDefinition() as fd:",
            *b.lines,
            "inputs = " + repr([(list(t.shape), TORCH_TO_NAME[t.dtype]) for t in inputs]),
        ]
    )
    return Case(seed, fd, inputs, [n.torch_value for n in outs], src, b.ops, [n.tol for n in outs], updates)


def _in_place_update(fd: FusionDefinition, b: _Builder, inputs: list[torch.Tensor]) -> list[tuple[int, torch.Tensor, float]]:
    """An output written in place into an input of its shape and dtype
    (``fd.add_output(t, alias_input=x)``, nvFuser's in-place update), chosen among
    the computed tensors; [] when none fits. The input may also be read elsewhere,
    through broadcasts, permutes and reductions: the races ``mark-aliases`` cuts."""
    defined = {id(n.torch_value): n for n in b.nodes}
    pairs = [
        (n, i, defined[id(x)]) for n in b.nodes for i, x in enumerate(inputs)
        if id(n.torch_value) not in map(id, inputs)
        and n.torch_value.shape == x.shape and n.torch_value.dtype == x.dtype
    ]
    b.rng.shuffle(pairs)
    for node, i, x in pairs:
        try:  # the output's type must be the input's (static extents included)
            fd.add_output(node.fd_value, alias_input=x.fd_value)
        except ValueError:
            continue
        b.lines.append(f"    fd.add_output({node.name}, alias_input={x.name})")
        b.ops.append("in_place")
        return [(i, node.torch_value, node.tol)]
    return []


def _pick_outputs(b: _Builder) -> list[Node]:
    candidates = b.nodes[b.n_inputs :] or b.nodes
    outs = [candidates[-1]]
    for n in candidates[:-1]:
        if b.rng.random() < 0.2 and len(outs) < 3:
            outs.append(n)
    return outs


def _broadcastable(a: Node, c: Node) -> bool:
    """Whether a binary op of ``a`` and ``c`` is valid: same rank, and per axis equal
    extents or a broadcast (static extent 1 in the fusion's type) on the smaller side."""
    sa, sc = list(a.torch_value.shape), list(c.torch_value.shape)
    if len(sa) != len(sc):
        return False
    ta, tc = a.fd_value.type.get_shape(), c.fd_value.type.get_shape()
    for i, (x, y) in enumerate(zip(sa, sc, strict=True)):
        if x == y:
            continue
        if (x == 1 and ta[i] != 1) or (y == 1 and tc[i] != 1) or 1 not in (x, y):
            return False
    return True


def _random_op(fd: FusionDefinition, b: _Builder) -> None:
    rng = b.rng
    x = b.pick()
    tv = x.torch_value
    shape = list(tv.shape)
    kind = rng.choice(
        (
            "unary",
            "unary",
            "binary",
            "binary",
            "binary",
            "scalar",
            "reduce",
            "reduce",
            "var",
            "bcast",
            "reshape",
            "permute",
            "slice",
            "cast",
        )
    )
    if kind == "unary":
        op = rng.choice(UNARY)
        torch_op = getattr(torch.nn.functional, op) if op == "silu" else getattr(torch, op)
        y = b.emit(getattr(fd.ops, op)(x.fd_value), torch_op(tv), f"fd.ops.{op}({x.name})", (x,))
        if op in ABS_TO_REL and tv.numel() and tv.dtype.is_floating_point:
            # x's relative error is an absolute error of tol * |x|, which sin and cos pass
            # on as an absolute error and exp as a relative one: a float32 sum of 4224
            # values near 100, summed in another order, moved sin(sum) by 1.35e-4 (seed
            # 11267), over the 1e-4 of a float32 value.
            y.tol = max(y.tol, x.tol * float(tv.abs().nan_to_num(0.0, 0.0, 0.0).max()))
    elif kind == "binary":
        others = [n for n in b.nodes if _broadcastable(n, x)]
        y = rng.choice(others)
        op = rng.choice(BINARY)
        tw = getattr(torch, op)(tv, y.torch_value)
        b.emit(
            getattr(fd.ops, op)(x.fd_value, y.fd_value),
            tw,
            f"fd.ops.{op}({x.name}, {y.name})",
            (x, y),
        )
    elif kind == "scalar":
        op = rng.choice(("add", "mul", "sub"))
        c = rng.choice((0.5, 2.0, -1.5, 3))
        b.emit(
            getattr(fd.ops, op)(x.fd_value, c),
            getattr(torch, op)(tv, c),
            f"fd.ops.{op}({x.name}, {c!r})",
            (x,),
        )
    elif kind == "reduce":
        if not shape:
            return
        dims = sorted(rng.sample(range(len(shape)), rng.randint(1, len(shape))))
        keep = rng.random() < 0.5
        op = rng.choice(("sum", "sum", "max", "min"))
        if op == "sum":
            tw = torch_sum(tv, dim=dims, keepdim=keep)
        else:
            tw = (
                torch.amax(tv, dim=dims, keepdim=keep)
                if op == "max"
                else torch.amin(tv, dim=dims, keepdim=keep)
            )
        b.emit(
            getattr(fd.ops, op)(x.fd_value, dims=dims, keepdim=keep),
            tw,
            f"fd.ops.{op}({x.name}, dims={dims}, keepdim={keep})",
            (x,),
        )
    elif kind == "var":
        if not shape:
            return
        dims = sorted(rng.sample(range(len(shape)), rng.randint(1, len(shape))))
        keep = rng.random() < 0.5
        n = int(np.prod([shape[d] for d in dims]))
        corr = 0 if n <= 1 else rng.choice((0, 1))
        if rng.random() < 0.5:
            v = fd.ops.var(x.fd_value, dims=dims, correction=corr, keepdim=keep)
            b.emit(
                v,
                torch.var(tv, dim=dims, correction=corr, keepdim=keep),
                f"fd.ops.var({x.name}, dims={dims}, correction={corr}, keepdim={keep})",
                (x,),
            )
        else:
            v, m = fd.ops.var_mean(x.fd_value, dims=dims, correction=corr, keepdim=keep)
            tvv, tm = torch.var_mean(tv, dim=dims, correction=corr, keepdim=keep)
            nv = b.emit(v, tvv, "", (x,))
            nm = b.emit(m, tm, "", (x,))
            del b.lines[-2:]
            b.lines.append(
                f"    {nv.name}, {nm.name} = fd.ops.var_mean({x.name}, dims={dims}, correction={corr}, keepdim={keep})"
            )
    elif kind == "bcast":
        # broadcast_in_dim to a full shape: insert new axes and/or expand size-1 axes
        out_rank = len(shape) + rng.randint(0, 1)
        if out_rank == 0 or out_rank > 4:
            return
        bdims = sorted(rng.sample(range(out_rank), len(shape)))
        out_shape = [rng.choice(b.extents[2:8]) for _ in range(out_rank)]
        for i, d in enumerate(bdims):
            if shape[i] != 1 or rng.random() < 0.5:
                out_shape[d] = shape[i]
        view_shape = [1] * out_rank
        for i, d in enumerate(bdims):
            view_shape[d] = shape[i]
        tw = tv.reshape(view_shape).expand(out_shape)
        b.emit(
            fd.ops.broadcast_in_dim(x.fd_value, shape=out_shape, broadcast_dims=bdims),
            tw,
            f"fd.ops.broadcast_in_dim({x.name}, shape={out_shape}, broadcast_dims={bdims})",
            (x,),
        )
    elif kind == "reshape":
        if not shape:
            return
        new = list(shape)
        if len(shape) >= 2 and rng.random() < 0.5:
            i = rng.randrange(len(shape) - 1)
            new[i : i + 2] = [shape[i] * shape[i + 1]]
        else:
            i = rng.randrange(len(shape))
            e = shape[i]
            fs = [f for f in range(2, e) if e % f == 0]
            if fs:
                f = rng.choice(fs)
                new[i : i + 1] = [f, e // f]
            else:
                new[i : i + 1] = [e, 1] if rng.random() < 0.5 else [1, e]
        b.emit(
            fd.ops.reshape(x.fd_value, new),
            tv.reshape(new),
            f"fd.ops.reshape({x.name}, {new})",
            (x,),
        )
    elif kind == "permute":
        if len(shape) < 2:
            return
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        b.emit(
            fd.ops.permute(x.fd_value, perm),
            tv.permute(perm),
            f"fd.ops.permute({x.name}, {perm})",
            (x,),
        )
    elif kind == "slice":
        if not shape:
            return
        starts, ends, strides = [], [], []
        for e in shape:
            s = rng.randrange(e)
            en = rng.randint(s + 1, e)
            st = rng.choice((1, 1, 2, 3))
            starts.append(s)
            ends.append(en)
            strides.append(st)
        tw = tv[tuple(slice(s, e, st) for s, e, st in zip(starts, ends, strides, strict=True))]
        # nvFuser's slice has step 1; fuser's strided_slice takes any positive step.
        op = "slice" if all(st == 1 for st in strides) else "strided_slice"
        b.emit(
            getattr(fd.ops, op)(x.fd_value, starts, ends, strides),
            tw,
            f"fd.ops.{op}({x.name}, {starts}, {ends}, {strides})",
            (x,),
        )
    elif kind == "cast":
        dname = rng.choice(tuple(DTYPES))
        dt, tdt = DTYPES[dname]
        b.emit(
            fd.ops.cast(x.fd_value, dt),
            tv.to(tdt),
            f"fd.ops.cast({x.name}, DataType.{dt.name})",
            (x,),
        )
    else:  # pragma: no cover
        raise AssertionError(kind)
    if b.nodes[-1] is not x:
        b.ops.append(kind)


# ---- later families (drawn from the case's second random stream) -----------------------


def _new_input(
    fd: FusionDefinition, b: _Builder, inputs: list[torch.Tensor], value: torch.Tensor, dname: str
) -> Node:
    dt = (DTYPES | MORE_DTYPES)[dname][0]
    shape = list(value.shape)
    sym = [1 if e == 1 else -1 for e in shape]
    contig = [True if e != 1 else None for e in shape]
    inputs.append(value)
    t = fd.define_tensor(shape=sym, contiguity=contig, dtype=dt)
    return b.emit(
        t, value, f"fd.define_tensor(shape={sym}, contiguity={contig}, dtype=DataType.{dt.name})"
    )


def _zero_dim(fd: FusionDefinition, b: _Builder, inputs: list[torch.Tensor]) -> Node | None:
    """A binary op between a tensor with dimensions and a zero-dim tensor (a full
    reduction or a zero-dim input): torch promotes by category across the two."""
    rng = b.rng
    dimmed = [n for n in b.nodes if n.torch_value.ndim > 0]
    if not dimmed:
        return None
    x = rng.choice(dimmed)
    if rng.random() < 0.5:
        y = rng.choice(dimmed)
        dims = list(range(y.torch_value.ndim))
        z = b.emit(
            fd.ops.sum(y.fd_value, dims=dims, keepdim=False),
            torch_sum(y.torch_value),
            f"fd.ops.sum({y.name}, dims={dims}, keepdim=False)",
            (y,),
        )
    else:
        dname = rng.choice(("f32", "f16", "bf16", "f64"))
        value = _random_tensor(rng, [], (DTYPES | MORE_DTYPES)[dname][1])
        z = _new_input(fd, b, inputs, value, dname)
    op = rng.choice(BINARY)
    a, c = (x, z) if rng.random() < 0.5 else (z, x)
    tw = getattr(torch, op)(a.torch_value, c.torch_value)
    return b.emit(
        getattr(fd.ops, op)(a.fd_value, c.fd_value), tw, f"fd.ops.{op}({a.name}, {c.name})", (a, c)
    )


def _reduced(fd: FusionDefinition, b: _Builder, min_rank: int) -> tuple[Node, int] | None:
    """A sum of a recent tensor over one axis (keepdim or not), and that axis."""
    rng = b.rng
    xs = [n for n in b.nodes if n.torch_value.ndim >= min_rank]
    if not xs:
        return None
    x = rng.choice(xs)
    d = rng.randrange(x.torch_value.ndim)
    keep = x.torch_value.ndim == 1 or rng.random() < 0.5
    tw = torch_sum(x.torch_value, dim=[d], keepdim=keep)
    r = b.emit(
        fd.ops.sum(x.fd_value, dims=[d], keepdim=keep),
        tw,
        f"fd.ops.sum({x.name}, dims={[d]}, keepdim={keep})",
        (x,),
    )
    return r, d


def _index_select(fd: FusionDefinition, b: _Builder, inputs: list[torch.Tensor]) -> Node | None:
    """``index_select`` of a reduction result, with an index input in range."""
    rng = b.rng
    red = _reduced(fd, b, 2)
    if red is None:
        return None
    r, _ = red
    a = rng.randrange(r.torch_value.ndim)
    extent = r.torch_value.shape[a]
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    idx = torch.randint(0, extent, (rng.randint(1, 5),), generator=gen)
    i = _new_input(fd, b, inputs, idx, "i64")
    tw = torch.index_select(r.torch_value, a, idx)
    return b.emit(
        fd.ops.index_select(r.fd_value, i.fd_value, a),
        tw,
        f"fd.ops.index_select({r.name}, {i.name}, {a})",
        (r,),
    )


def _cat(fd: FusionDefinition, b: _Builder) -> Node | None:
    """``cat`` of a tensor with its keepdim reduction (or with a unary op of it)."""
    rng = b.rng
    xs = [n for n in b.nodes if n.torch_value.ndim >= 1]
    if not xs:
        return None
    x = rng.choice(xs)
    d = rng.randrange(x.torch_value.ndim)
    if rng.random() < 0.7:
        tw = torch_sum(x.torch_value, dim=[d], keepdim=True)
        y = b.emit(
            fd.ops.sum(x.fd_value, dims=[d], keepdim=True),
            tw,
            f"fd.ops.sum({x.name}, dims={[d]}, keepdim=True)",
            (x,),
        )
    else:
        y = b.emit(fd.ops.neg(x.fd_value), torch.neg(x.torch_value), f"fd.ops.neg({x.name})", (x,))
    parts = [x, y] if rng.random() < 0.5 else [y, x]
    tw = torch.cat([p.torch_value for p in parts], dim=d)
    names = ", ".join(p.name for p in parts)
    return b.emit(
        fd.ops.cat([p.fd_value for p in parts], d), tw, f"fd.ops.cat([{names}], {d})", tuple(parts)
    )


def _float64(fd: FusionDefinition, b: _Builder, inputs: list[torch.Tensor]) -> Node | None:
    """A float64 input combined with a tensor of the fusion, then maybe reduced."""
    rng = b.rng
    x = rng.choice(b.nodes)
    value = _random_tensor(rng, list(x.torch_value.shape), torch.float64)
    w = _new_input(fd, b, inputs, value, "f64")
    op = rng.choice(BINARY)
    tw = getattr(torch, op)(x.torch_value, w.torch_value)
    y = b.emit(
        getattr(fd.ops, op)(x.fd_value, w.fd_value), tw, f"fd.ops.{op}({x.name}, {w.name})", (x, w)
    )
    if y.torch_value.ndim and rng.random() < 0.5:
        op = rng.choice(("sum", "max", "min"))
        d = rng.randrange(y.torch_value.ndim)
        tw = torch_sum(tw, dim=[d]) if op == "sum" else getattr(torch, f"a{op}")(tw, dim=[d])
        y = b.emit(
            getattr(fd.ops, op)(y.fd_value, dims=[d], keepdim=False),
            tw,
            f"fd.ops.{op}({y.name}, dims={[d]}, keepdim=False)",
            (y,),
        )
    return y


def _extra_families(fd: FusionDefinition, b: _Builder, inputs: list[torch.Tensor]) -> list[Node]:
    """Extra outputs from the later families for about half of the cases."""
    rng = b.rng
    if rng.random() < 0.5:
        return []
    family = rng.choice(("zero_dim", "index_select", "cat", "float64", "unused"))
    if family == "unused":
        # ops that no output uses (the main draw makes some too)
        for _ in range(rng.randint(1, 3)):
            _random_op(fd, b)
        return []
    if family == "zero_dim":
        node = _zero_dim(fd, b, inputs)
    elif family == "index_select":
        node = _index_select(fd, b, inputs)
    elif family == "cat":
        node = _cat(fd, b)
    else:
        node = _float64(fd, b, inputs)
    if node is None:
        return []
    b.ops.append(family)
    return [node]


def _resize_or_library(fd: FusionDefinition, b: _Builder, inputs: list[torch.Tensor]) -> Node | None:
    """One of the families that mix with the others' segments: a ``pad`` of a tensor
    (torch's pad order, maybe a negative width), the ``cat`` of a transposed tensor
    with another along an axis (seed 618: a transpose and a resize in one segment), or
    a ``matmul`` of a float32 view of a rank-2 tensor with a new input (a library
    segment between generated ones)."""
    rng = b.rng
    family = rng.choice(("pad", "permute_cat", "matmul"))
    if family == "pad":
        xs = [n for n in b.nodes if n.torch_value.ndim >= 1]
        if not xs:
            return None
        x = rng.choice(xs)
        axes = min(x.torch_value.ndim, rng.choice((1, 2)))
        widths: list[int] = []
        for a in range(axes):
            extent = x.torch_value.shape[x.torch_value.ndim - 1 - a]
            widths += [rng.choice((0, 1, 3)), rng.choice((0, 2, -1 if extent > 1 else 0))]
        v = rng.choice((0.0, 1.5))
        node = b.emit(
            fd.ops.pad(x.fd_value, widths, fd.define_scalar(v)),
            torch.nn.functional.pad(x.torch_value, widths, value=v),
            f"fd.ops.pad({x.name}, {widths}, fd.define_scalar({v}))",
            (x,),
        )
    elif family == "permute_cat":
        xs = [n for n in b.nodes if n.torch_value.ndim == 2]
        if not xs:
            return None
        x = rng.choice(xs)
        t = b.emit(fd.ops.permute(x.fd_value, [1, 0]), x.torch_value.permute(1, 0),
                   f"fd.ops.permute({x.name}, [1, 0])", (x,))
        y = b.emit(fd.ops.exp(t.fd_value), torch.exp(t.torch_value), f"fd.ops.exp({t.name})", (t,))
        d = rng.randrange(2)
        parts = [t, y] if rng.random() < 0.5 else [y, t]
        node = b.emit(
            fd.ops.cat([p.fd_value for p in parts], d),
            torch.cat([p.torch_value for p in parts], dim=d),
            f"fd.ops.cat([{parts[0].name}, {parts[1].name}], {d})",
            tuple(parts),
        )
    else:
        xs = [n for n in b.nodes if n.torch_value.ndim == 2 and n.torch_value.dtype.is_floating_point]
        if not xs:
            return None
        x = rng.choice(xs)
        if x.torch_value.dtype != torch.float32:
            x = b.emit(fd.ops.cast(x.fd_value, DataType.Float), x.torch_value.float(),
                       f"fd.ops.cast({x.name}, DataType.Float)", (x,))
        k = x.torch_value.shape[1]
        w = _new_input(fd, b, inputs, _random_tensor(rng, [k, rng.choice((1, 3, 64))], torch.float32), "f32")
        node = b.emit(fd.ops.matmul(x.fd_value, w.fd_value), torch.matmul(x.torch_value, w.torch_value),
                      f"fd.ops.matmul({x.name}, {w.name})", (x, w))
    b.ops.append(family)
    return node


COMPARE = ("gt", "lt", "ge", "le", "eq", "ne")
INT_BINARY = ("add", "sub", "mul", "maximum", "minimum")


def _int_bool(fd: FusionDefinition, b: _Builder, inputs: list[torch.Tensor]) -> Node | None:
    """Bool and int32 tensors: a comparison of a fusion input with a scalar (a bool
    output, or the condition of a ``where``, or cast to int32 and summed into int64),
    or a cast of an input to int32 combined with an int32 input (int32 arithmetic,
    maybe summed into int64 or cast back to float). Comparisons and casts read inputs
    only: their values are exact, so a value on a threshold or an integer boundary
    compares as in torch (a computed value may differ from torch's in the last bit)."""
    rng = b.rng
    xs = [n for n in b.nodes[: b.n_inputs] if n.torch_value.dtype.is_floating_point]
    if not xs:
        return None
    x = rng.choice(xs)
    kind = rng.choice(("compare", "where", "bool_sum", "int", "int"))
    if kind != "int":
        op = rng.choice(COMPARE)
        v = rng.choice((0.0, 0.5, -1.0, 1.5))
        c = b.emit(
            getattr(fd.ops, op)(x.fd_value, fd.define_scalar(v)),
            getattr(torch, op)(x.torch_value, v),
            f"fd.ops.{op}({x.name}, fd.define_scalar({v}))",
            (x,),
        )
        if kind == "compare":
            return c
        if kind == "where":
            others = [n for n in b.nodes if n is not c and _broadcastable(x, n)]
            y = rng.choice(others) if others else x
            a, d = (x, y) if rng.random() < 0.5 else (y, x)
            return b.emit(
                fd.ops.where(c.fd_value, a.fd_value, d.fd_value),
                torch.where(c.torch_value, a.torch_value, d.torch_value),
                f"fd.ops.where({c.name}, {a.name}, {d.name})",
                (c, a, d),
            )
        k = b.emit(
            fd.ops.cast(c.fd_value, DataType.Int32),
            c.torch_value.to(torch.int32),
            f"fd.ops.cast({c.name}, DataType.Int32)",
            (c,),
        )
    else:
        xi = b.emit(
            fd.ops.cast(x.fd_value, DataType.Int32),
            x.torch_value.to(torch.int32),
            f"fd.ops.cast({x.name}, DataType.Int32)",
            (x,),
        )
        gen = torch.Generator().manual_seed(rng.randrange(2**31))
        value = torch.randint(-5, 6, list(x.torch_value.shape), generator=gen, dtype=torch.int32)
        w = _new_input(fd, b, inputs, value, "i32")
        op = rng.choice(INT_BINARY)
        a, d = (xi, w) if rng.random() < 0.5 else (w, xi)
        k = b.emit(
            getattr(fd.ops, op)(a.fd_value, d.fd_value),
            getattr(torch, op)(a.torch_value, d.torch_value),
            f"fd.ops.{op}({a.name}, {d.name})",
            (a, d),
        )
        if rng.random() < 0.3:
            return b.emit(
                fd.ops.cast(k.fd_value, DataType.Float),
                k.torch_value.to(torch.float32),
                f"fd.ops.cast({k.name}, DataType.Float)",
                (k,),
            )
    if k.torch_value.ndim == 0 or rng.random() < 0.3:
        return k
    dim = rng.randrange(k.torch_value.ndim)
    return b.emit(
        fd.ops.sum(k.fd_value, dims=[dim], keepdim=False),
        torch_sum(k.torch_value, dim=[dim]),
        f"fd.ops.sum({k.name}, dims={[dim]}, keepdim=False)",
        (k,),
    )
