"""The repro script in nvFuser's form for torch inputs (``fuser.frontend.repro``) and
the ``stride_order`` nvFuser records for tensors defined from sizes and strides."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from fuser import DataType, FusionDefinition

torch = pytest.importorskip("torch")


def _mul(inputs: list) -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(inputs[0])
        t1 = fd.from_pytorch(inputs[1])
        fd.add_output(fd.ops.mul(t0, t1))
    return fd


def _body(script: str) -> list[str]:
    return [line for line in script.strip().split("\n") if not line.startswith("# ")]


def test_from_pytorch_records_the_stride_order() -> None:
    fd = _mul([torch.randn(4, 4), torch.randn(4, 4).T])
    text = repr(fd)
    assert (
        "T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])"
        in text
    )
    assert (
        "T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[0, 1])"
        in text
    )
    # define_tensor(shape=...) without stride_order records none (a different fusion)
    with FusionDefinition() as other:
        t0 = other.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        other.add_output(t0)
    assert "stride_order" not in repr(other)


def test_torch_inputs_give_nvfusers_script() -> None:
    inputs = [torch.randn(4, 4), torch.randn(4, 4)]
    fd = _mul(inputs)
    script = fd.repro_script_for(inputs)
    assert script.startswith("# fuser version: ")
    n = fd.id()
    assert _body(script) == [
        "import torch",
        "from nvfuser import FusionDefinition, DataType",
        "",
        f"def nvfuser_fusion_id{n}(fd : FusionDefinition) -> None :",
        "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])",
        "    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])",
        "    T2 = fd.ops.mul(T0, T1)",
        "    fd.add_output(T2)",
        "",
        "with FusionDefinition() as fd:",
        f"    nvfuser_fusion_id{n}(fd)",
        "",
        "inputs = [",
        "    torch.testing.make_tensor((4, 4), dtype=torch.float32, device='cpu'),",
        "    torch.testing.make_tensor((4, 4), dtype=torch.float32, device='cpu'),",
        "]",
        "fd.execute(inputs)",
    ]
    old, sys.stdout = sys.stdout, io.StringIO()
    try:
        fd.execute(inputs, print_repro=True)
        printed = sys.stdout.getvalue()
    finally:
        sys.stdout = old
    assert printed == script + "\n"
    fd.execute(inputs, save_repro_inputs=True)
    assert fd.last_repro_script() == script


def test_the_script_runs_with_fuser_as_nvfuser(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    shim = types.ModuleType("nvfuser")
    shim.FusionDefinition = FusionDefinition  # type: ignore[attr-defined]
    shim.DataType = DataType  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nvfuser", shim)
    inputs = [torch.randn(3, 4).T, torch.randint(0, 5, (4, 3)).to(torch.float32), 2.5]
    with FusionDefinition() as fd:
        t0, t1 = fd.from_pytorch(inputs[0]), fd.from_pytorch(inputs[1])
        fd.add_output(fd.ops.mul(fd.ops.add(t0, t1), fd.define_scalar()))
    script = fd.repro_script_for(inputs)
    assert ".as_strided((4, 3), (1, 4))" in script and "    2.5," in script
    scope: dict = {}
    exec(script, scope)  # noqa: S102 - the script under test
    assert scope["fd"].id() == fd.id()


def test_numpy_inputs_keep_fusers_numpy_script() -> None:
    x = np.ones((2, 2), np.float32)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.neg(fd.from_pytorch(x)))
    script = fd.repro_script_for([x])
    assert "import numpy as np" in script and "from nvfuser" not in script
