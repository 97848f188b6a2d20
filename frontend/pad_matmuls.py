"""Pad the matrix products of an ATen joint graph whose extents cuBLAS's fast kernels
cannot take, before AOTAutograd splits it into forward and backward (inductor's
``pad_mm`` does the same, in the same place).

cuBLAS takes its fast GEMM kernels only when every extent (M, N, K) of a 16-bit product
is a multiple of 8 (16 bytes of elements: ``library_ops.ALIGN_BYTES``). GPT-2's LM head
has N = 50257, and its two backward products have it as K and M. ``library_ops.gemm``
pads such a product's operands itself, which costs a copy of each operand and of the
product per call: three 4096 x 50257 bf16 copies of 375 us each on an H200, one per
product. Padded in the graph instead, the zeros come from where the operands are
computed: the pad of the logits' gradient is one more output column of the kernel that
computes it (fuser fuses ``constant_pad_nd`` into the producer), both backward products
read that one padded tensor, and the forward product's extra columns are dropped by a
slice, a view with an aligned row pitch::

    %mm = aten.mm(%h, %t)                       # [4096, 768] x [768, 50257]
    %t = aten.t(%w)                             # %w: [50257, 768]

becomes::

    %pad = aten.constant_pad_nd(%w, [0, 0, 0, 7], 0.0)    # [50264, 768]
    %t2 = aten.t(%pad)                                     # [768, 50264]
    %mm2 = aten.mm(%h, %t2)                                # [4096, 50264]
    %mm = aten.slice.Tensor(%mm2, 1, 0, 50257)             # [4096, 50257], row pitch 50264

An operand that is a transpose (``aten.t``, ``transpose(0, 1)``, ``permute([1, 0])``)
is padded before it, so the padded tensor keeps the operand's memory order and a
transposed read of one tensor pads that tensor once for every product that reads it
(``pad_of`` keeps one pad per tensor and widths). Zeros added along K add nothing to
the sums; the rows and columns added along M and N are sliced off.

A graph output the rewrite leaves strided (a sliced product returned to the caller)
is copied into the contiguous strides eager gave it, as inductor keeps output
strides: ``logits.view(-1)`` works as in eager, while the graph's own nodes (and what
the backward saves) read the padded product. The torch backend pads the joint graph
of a training step (before the min-cut) and an inference graph (before it is
partitioned).

``pad_matmuls(gm)`` rewrites ``aten.mm`` and ``aten.addmm`` nodes (its bias padded too)
whose traced values (``meta["val"]``) are matrices on the GPU that ``library_ops``
would pad at run time (``worth_padding``, ``padded_extent``: one rule for both).
``FUSER_PAD_MATMULS`` in the environment chooses: ``auto`` (that rule, the default),
``always`` (every unaligned 2-D product, the CPU included: how tests run it on tiny
models) or ``never``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

from fuser.frontend.torch_graph import traced_strides
from fuser.runtime.gpu_arrays import contiguous_strides
from fuser.runtime.library_ops import padded_extent, worth_padding

__all__ = ["PAD_MODES", "pad_matmuls", "pad_mode"]

PAD_MODES = ("auto", "always", "never")


def pad_mode() -> str:
    """``FUSER_PAD_MATMULS`` (``auto`` when unset); ``ValueError`` naming the variable
    for anything else."""
    value = os.environ.get("FUSER_PAD_MATMULS", PAD_MODES[0])
    if value not in PAD_MODES:
        raise ValueError(f"FUSER_PAD_MATMULS must be one of {', '.join(PAD_MODES)}, got {value!r}")
    return value


def _wants_padding(a: Any, b: Any, mode: str) -> bool:
    """Whether the product of traced matrices ``a`` [m, k] and ``b`` [k, n] is padded."""
    if a.dim() != 2 or b.dim() != 2 or a.dtype != b.dtype or not a.dtype.is_floating_point:
        return False
    if not all(type(e) is int for e in (*a.shape, *b.shape)):
        return False  # a symbolic extent (int() of it would add a guard)
    (m, k), n = a.shape, b.shape[1]
    if all(padded_extent(e, a.element_size()) == e for e in (m, k, n)) or min(m, n, k) == 0:
        return False
    return mode == "always" or (a.is_cuda and worth_padding(m, k, n))


class _Rewriter:
    """Builds the padded nodes of one graph, each pad once (``pad_of``)."""

    def __init__(self, gm: Any) -> None:
        import torch

        self.torch = torch
        self.aten = torch.ops.aten
        self.graph = gm.graph
        self.pads: dict[tuple[Any, int, int], Any] = {}

    def node(
        self, target: Any, args: Sequence[Any], like: Any, after: Any = None, kwargs: dict[str, Any] | None = None
    ) -> Any:
        """A new ``call_function`` node before ``like`` (or just after ``after``), its
        ``meta["val"]`` computed from its arguments' traced values (in their fake
        mode)."""
        kwargs = kwargs or {}
        where = self.graph.inserting_after(after) if after is not None else self.graph.inserting_before(like)
        with where:
            new = self.graph.call_function(target, tuple(args), kwargs)
        vals = [a.meta["val"] if hasattr(a, "meta") else a for a in args]
        fake_mode = next((v.fake_mode for v in vals if hasattr(v, "fake_mode")), None)
        with fake_mode if fake_mode is not None else contextlib.nullcontext():
            new.meta["val"] = target(*vals, **kwargs)
        for key in ("stack_trace", "nn_module_stack", "source_fn_stack", "seq_nr", "partitioner_tag"):
            if key in like.meta:
                new.meta[key] = like.meta[key]
        return new

    def transposed(self, x: Any) -> Any | None:
        """The matrix ``x`` is the transpose of, if it is one."""
        if x.op != "call_function" or x.meta["val"].dim() != 2:
            return None
        aten = self.aten
        if x.target is aten.t.default:
            return x.args[0]
        if x.target is aten.transpose.int and sorted(d % 2 for d in x.args[1:3]) == [0, 1]:
            return x.args[0]
        if x.target is aten.permute.default and list(x.args[1]) == [1, 0]:
            return x.args[0]
        return None

    def pad_of(self, x: Any, rows: int, cols: int, user: Any) -> Any:
        """``x`` (a matrix node) with ``rows`` zero rows and ``cols`` zero columns
        after its own; a transpose is padded before it (``transposed``)."""
        if rows == 0 and cols == 0:
            return x
        key = (x, rows, cols)
        if key in self.pads:
            return self.pads[key]
        inner = self.transposed(x)
        if inner is not None:
            inner_padded = self.pad_of(inner, cols, rows, x)
            padded = self.node(self.aten.t.default, [inner_padded], user, after=inner_padded)
        else:
            # Right after the tensor it pads, so that a partition computing the tensor
            # computes the pad too (an input's pad goes before its first user).
            after = x if x.op != "placeholder" else None
            padded = self.node(self.aten.constant_pad_nd.default, [x, [0, cols, 0, rows], 0.0], user, after=after)
        self.pads[key] = padded
        return padded

    def rewrite(self, mm: Any, bias: Any, a: Any, b: Any) -> None:
        va, vb = a.meta["val"], b.meta["val"]
        (m, k), n = va.shape, vb.shape[1]
        mp, kp, np_ = (padded_extent(e, va.element_size()) for e in (m, k, n))
        pa = self.pad_of(a, mp - m, kp - k, mm)
        pb = self.pad_of(b, kp - k, np_ - n, mm)
        if bias is None:
            product = self.node(self.aten.mm.default, [pa, pb], mm)
        else:
            pbias = bias if np_ == n else self.node(self.aten.constant_pad_nd.default, [bias, [0, np_ - n], 0.0], mm)
            product = self.node(self.aten.addmm.default, [pbias, pa, pb], mm)
        out = product
        if mp != m:
            out = self.node(self.aten.slice.Tensor, [out, 0, 0, m], mm)
        if np_ != n:
            out = self.node(self.aten.slice.Tensor, [out, 1, 0, n], mm)
        if out is not product:
            self.keep_views(mm, out)
        mm.replace_all_uses_with(out)
        self.graph.erase_node(mm)
        for operand in (a, b):
            if not operand.users and self.transposed(operand) is not None:
                self.graph.erase_node(operand)  # a transpose only the product read

    def keep_views(self, mm: Any, out: Any) -> None:
        """An ``_unsafe_view`` of the product (how ``aten.matmul`` of a batch folds
        back) becomes a ``view``, which keeps the slice's row pitch: torch traces an
        ``_unsafe_view`` contiguous, which would make the partition that returns it
        copy the sliced product. Only where the view needs no copy."""
        val = out.meta["val"]
        for user in list(mm.users):
            if user.op == "call_function" and user.target is self.aten._unsafe_view.default:
                try:
                    with val.fake_mode:
                        val.view(list(user.args[1]))
                except RuntimeError:
                    continue
                user.target = self.aten.view.default


def pad_matmuls(gm: Any, mode: str | None = None) -> int:
    """Pad ``gm``'s unaligned matrix products (module docstring) in place; returns how
    many. ``mode`` defaults to ``pad_mode()``."""
    mode = pad_mode() if mode is None else mode
    if mode == "never":
        return 0
    if not any(hasattr(n.meta.get("val"), "fake_mode") for n in gm.graph.nodes if n.op == "placeholder"):
        return 0  # not a traced (fake-tensor) graph: nothing to propagate the rewrite with
    rw = _Rewriter(gm)
    aten = rw.aten
    done = 0
    before = [traced_strides(v) for v in _outputs(gm)]
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.kwargs:
            continue
        if node.target is aten.mm.default:
            bias, (a, b) = None, node.args
        elif node.target is aten.addmm.default and len(node.args) == 3:
            bias, a, b = node.args
            if not hasattr(bias, "meta") or bias.meta["val"].dim() != 1:
                continue
        else:
            continue
        if not all(hasattr(x, "meta") and "val" in x.meta for x in (a, b)):
            continue
        if not _wants_padding(a.meta["val"], b.meta["val"], mode):
            continue
        rw.rewrite(node, bias, a, b)
        done += 1
    if done:
        _propagate(gm, rw)
        _keep_output_strides(gm, rw, before)
        gm.graph.lint()
        gm.recompile()
    return done


def _output_node(gm: Any) -> Any:
    return next(n for n in gm.graph.nodes if n.op == "output")


def _outputs(gm: Any) -> list[Any]:
    args = _output_node(gm).args[0]
    return list(args) if isinstance(args, list | tuple) else [args]


def _keep_output_strides(gm: Any, rw: _Rewriter, before: Sequence[tuple[int, ...] | None]) -> None:
    """An output the rewrite left strided (a sliced product returned to the user, a
    gradient) is copied into a contiguous tensor, as eager returned it (inductor's
    ``keep_output_stride``): ``logits.view(-1)`` works as in eager. The sliced product
    stays what the graph's other nodes read, so the backward can save it."""
    out = _output_node(gm)
    for v, old in zip(_outputs(gm), before, strict=True):
        val = getattr(v, "meta", {}).get("val")
        if old is None or not hasattr(val, "stride") or tuple(val.stride()) == old or val.is_contiguous():
            continue
        if old != contiguous_strides(val.shape):
            continue  # (traced in another layout: left as the rewrite made it)
        copy = rw.node(rw.aten.clone.default, [v], out, kwargs={"memory_format": rw.torch.contiguous_format})
        out.replace_input_with(v, copy)


def _propagate(gm: Any, rw: _Rewriter) -> None:
    """Trace every node's ``meta["val"]`` again: the nodes after a sliced product see
    its row pitch (a view of it is strided, not contiguous), so the partitions that
    read it declare it strided and torch's traced output strides are the ones fuser
    returns."""
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    vals = [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]
    mode = next(v.fake_mode for v in vals if hasattr(v, "fake_mode"))
    FakeTensorProp(gm, mode).propagate_dont_convert_inputs(*vals)
