"""``fuser.ir.rebuild.rebuilt``: an op built again with other operands or result
types keeps its class, properties and attributes; ops with regions are refused."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import StringAttr

from fuser import DataType, FusionDefinition
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.rebuild import rebuilt


def _fusion() -> F.FusionOp:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.sum(fd.ops.exp(a), dims=[1]))
    return fd.fusion()


def test_rebuilt_with_new_result_types_keeps_properties_and_attributes() -> None:
    fusion = _fusion()
    red = next(op for op in fusion.body.walk() if op.name == "fuser.sum")
    red.attributes["note"] = StringAttr("kept")
    t = red.results[0].type
    assert isinstance(t, F.TensorType)
    new = rebuilt(red, result_types=[t.with_dtype(DType.float64)])
    assert type(new) is type(red) and new is not red
    assert new.properties == red.properties and new.attributes == red.attributes
    assert list(new.operands) == list(red.operands)
    assert new.results[0].type == t.with_dtype(DType.float64)
    assert new.parent is None  # not inserted


def test_rebuilt_with_new_operands() -> None:
    fusion = _fusion()
    exp = next(op for op in fusion.body.walk() if op.name == "fuser.exp")
    other = fusion.body.block.args[0]
    new = rebuilt(exp, operands=[other])
    assert new.operands[0] is other and new.result_types == exp.result_types


def test_an_op_with_regions_is_refused() -> None:
    with pytest.raises(ValueError, match=r"fuser.fusion: rebuilt\(\) does not carry regions"):
        rebuilt(_fusion())
