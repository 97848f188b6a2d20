"""Transpose detection: two groups of fusion inputs/outputs whose innermost
(fastest-varying) axes are different iteration axes.

With the domain map's reference tensor, *group 1* holds the tensors whose innermost
non-broadcast axis is the reference's innermost axis; *group 2* the tensors that
span the reference's innermost axis but not innermost (their memory is laid out
along another axis, the group's innermost). A tensor that is broadcast along the
reference's innermost axis (a bias) belongs to neither. ``permute(a) + b``::

    %p = fuser.permute %a {dims = array<i64: 1, 0>} : (!fuser.tensor<?x?xf32>) -> ...
    %o = fuser.add %p, %b ...

has group 1 = ``{b, o}`` (innermost = ``b``'s axis 1) and group 2 = ``{a}``
(innermost = ``a``'s axis 1, which is ``o``'s axis 0).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.ir import SSAValue

from fuser.ir.dialects.fuser import FusionOp, TensorType

from .domain_map import Axis, DomainMap, build_domain_map
from .graph import fastest_axis, returned_outputs


@dataclass(frozen=True)
class TransposeGroups:
    reference: SSAValue
    group1: tuple[SSAValue, ...]
    group2: tuple[SSAValue, ...]
    inner1: int
    """The reference axis that is innermost for group 1."""
    inner2: int
    """The reference axis that is innermost for group 2."""


def _io_tensors(fusion: FusionOp) -> list[tuple[SSAValue, TensorType]]:
    """Tensor inputs and outputs with the layout they have in memory."""
    out: list[tuple[SSAValue, TensorType]] = [
        (a, a.type) for a in fusion.inputs if isinstance(a.type, TensorType)
    ]
    declared = list(fusion.function_type.outputs.data)
    aliases = fusion.output_op.get_alias_inputs()
    k = 0
    for v, alias in zip(returned_outputs(fusion), aliases, strict=True):
        if alias >= 0:
            t = fusion.inputs[alias].type
        else:
            t = declared[k]
            k += 1
        if isinstance(t, TensorType) and v not in [x for x, _ in out]:
            out.append((v, t))
    return out


def find_transpose_groups(
    fusion: FusionOp, dmap: DomainMap | None = None
) -> TransposeGroups | None:
    dmap = dmap or build_domain_map(fusion)
    ref = dmap.reference()
    if ref is None:
        return None
    ref_t = ref.type
    assert isinstance(ref_t, TensorType)
    ref_classes = dmap.classes(ref)
    ref_inner = fastest_axis(ref_t)
    if ref_inner is None:
        return None
    inner_class = ref_classes[ref_inner]
    group1: list[SSAValue] = []
    candidates: list[tuple[SSAValue, Axis]] = []
    for v, t in _io_tensors(fusion):
        axis = fastest_axis(t)
        if axis is None:
            continue
        cls = dmap.axis_class(v, axis)
        non_bcast = {dmap.axis_class(v, i) for i, e in enumerate(t.get_shape()) if e != 1}
        if cls == inner_class:
            group1.append(v)
        elif inner_class in non_bcast and cls in ref_classes:
            candidates.append((v, cls))
    if not candidates:
        return None
    inner2_class, _ = Counter(c for _, c in candidates).most_common(1)[0]
    group2 = tuple(v for v, c in candidates if c == inner2_class)
    return TransposeGroups(ref, tuple(group1), group2, ref_inner, ref_classes.index(inner2_class))
