"""nvFuser API names the conformance suite needs: execute keywords, repr, clone,
compute_contiguity/compute_tensor_descriptor, version, FusionCache serialization."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fuser import DataType, FusionCache, FusionDefinition
from fuser.frontend.fusion_definition import clone
from fuser.frontend.nvfuser_api import (
    Version,
    compute_contiguity,
    compute_tensor_descriptor,
    torch_dtype_to_nvfuser_dtype,
    version,
)


def _define(scale: float = 2.0) -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(t0, fd.define_scalar(scale)))
    return fd


def _x() -> np.ndarray:
    return np.arange(6, dtype=np.float32).reshape(2, 3)


def test_execute_accepts_nvfuser_keywords() -> None:
    fd = _define()
    for device in (None, "cpu"):
        (out,) = fd.execute(
            [_x()], device=device, _enable_options=["id_model"], _disable_options=[]
        )
        np.testing.assert_array_equal(out, _x() * 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"device": "cuda:0"}, "input 0 is on cpu:0 but device 'cuda:0' was given"),
        ({"device": "tpu"}, "unknown device 'tpu'"),
        ({"device": -1}, "device index must be >= 0"),
        ({"_enable_options": "id_model"}, "_enable_options must be a list"),
        ({"_disable_options": [1]}, "_disable_options entries must be strings"),
        ({"profile": 1}, "profile must be True or False"),
        ({"print_repro": 1}, "print_repro must be True or False"),
    ],
)
def test_execute_rejects_bad_keywords(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        _define().execute([_x()], **kwargs)


def test_disabling_matmul_expr_eval_leaves_a_matmul_without_a_scheduler() -> None:
    """nvFuser's ``matmul_expr_eval`` off asks for generated matmul kernels; fuser runs
    matmuls only as library calls, so it says there is no scheduler (nvFuser's
    RuntimeError) instead of calling the library it was told not to. A fusion without
    a matmul runs as usual, and so does the matmul without the option."""
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.matmul(a, b))
    x, y = np.ones((4, 3), np.float32), np.ones((3, 2), np.float32)
    with pytest.raises(RuntimeError, match="Can not find a scheduler to schedule fusion segment: fuser.matmul"):
        fd.execute([x, y], _disable_options=["matmul_expr_eval"])
    np.testing.assert_array_equal(fd.execute([x, y], _enable_options=["fuse_matmul"])[0], np.full((4, 2), 3.0))
    (out,) = _define().execute([_x()], _disable_options=["matmul_expr_eval"])
    np.testing.assert_array_equal(out, _x() * 2)


def test_print_repro_and_last_repro_script(capsys: pytest.CaptureFixture[str]) -> None:
    fd = _define()
    with pytest.raises(ValueError, match="save_repro_inputs=True first"):
        fd.last_repro_script()
    fd.execute([_x()], print_repro=True, save_repro_inputs=True)
    printed = capsys.readouterr().out
    assert f"def nvfuser_fusion_id{fd.id()}(fd : FusionDefinition)" in printed
    assert fd.last_repro_script().rstrip("\n") == printed.rstrip("\n")


def test_repr_has_the_function_on_its_second_line() -> None:
    """nvFuser's check_captured_python_definition reads the name from line 2 and execs."""
    fd = _define(3.0)
    text = repr(fd)
    name = re.findall(r"(nvfuser_fusion_id\d+)", text.split("\n")[1])[0]
    scope: dict = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, scope)  # noqa: S102 - the printed definition is the thing under test
    with FusionDefinition() as fd2:
        scope[name](fd2)
    assert fd2.id() == fd.id()
    np.testing.assert_array_equal(fd2.execute([_x()])[0], _x() * 3)


def test_clone() -> None:
    fd = _define(4.0)
    cloned = FusionDefinition()
    clone(fd, cloned)
    assert cloned.id() == fd.id() and repr(cloned) == repr(fd)
    np.testing.assert_array_equal(cloned.execute([_x()])[0], _x() * 4)
    with pytest.raises(ValueError, match="must be new and empty"):
        clone(fd, cloned)
    with pytest.raises(ValueError, match="expected two FusionDefinitions"):
        clone(fd, "fd")


def test_compute_contiguity() -> None:
    sizes = [2, 1, 3, 1, 4, 5, 6]
    assert compute_contiguity(sizes, [80, 30, 30, 4564, 0, 6, 1]) == [
        False, None, True, None, None, True, True,
    ]
    assert compute_contiguity(sizes, [800, 300, 300, 4564, 0, 60, 10])[-1] is False
    assert compute_contiguity([], []) == []
    with pytest.raises(ValueError, match="same number of dimensions"):
        compute_contiguity([2], [1, 1])


def test_compute_tensor_descriptor() -> None:
    assert compute_tensor_descriptor([2, 3, 1, 5, 4], [28, 4, 14, 0, 1]) == (
        [False, None, True, None, True],
        [4, 2, 3, 1, 0],
    )
    assert compute_tensor_descriptor([2, 2, 1, 2, 4, 2], [2, 32, 1, 8, 0, 4]) == (
        [False, True, True, False, None, None],
        [2, 5, 0, 4, 1, 3],
    )
    with pytest.raises(ValueError, match="negative stride"):
        compute_tensor_descriptor([2], [-1])
    with pytest.raises(ValueError, match="must be ints"):
        compute_tensor_descriptor([2.0], [1])


def test_version_compares_with_strings_and_versions() -> None:
    assert version() > "0.0.0"
    assert version() > Version("0.0.0")
    assert Version("1.2+abc") == Version("1.2.0")
    with pytest.raises(ValueError, match="not a version"):
        Version("x.y")


def test_torch_dtype_to_nvfuser_dtype() -> None:
    torch = pytest.importorskip("torch")
    assert torch_dtype_to_nvfuser_dtype(torch.float32) is DataType.Float
    assert torch_dtype_to_nvfuser_dtype(float) is DataType.Double


def test_fusion_cache_reset_releases_what_old_entries_compiled() -> None:
    """``FusionCache.reset()`` empties the cache, and a definition made before it
    (still held by its caller, as AOTAutograd holds the torch backend's partitions)
    gives up its compiled runtimes; running it again compiles again, with the same
    result."""
    FusionCache.reset()
    fd = _define(3.0)
    x = _x()
    (first,) = fd.execute([x])
    entry = fd._entry  # noqa: SLF001
    assert entry.runtimes
    FusionCache.reset()
    assert FusionCache.get().num_fusions() == 0
    assert not entry.runtimes and not entry.gpu_plans and not entry.hot
    (again,) = fd.execute([x])
    np.testing.assert_array_equal(again, first)
    assert entry.runtimes


def test_fusion_cache_serialize_round_trip(tmp_path: Path) -> None:
    FusionCache.reset()
    fd = _define(5.0)
    _define(6.0)
    path = tmp_path / "cache.json"
    FusionCache.get().serialize(path)
    FusionCache.reset()
    FusionCache.get().deserialize(path)
    assert FusionCache.get().num_fusions() == 2
    again = _define(5.0)  # found in the reloaded cache: no new fusion
    assert again.id() == fd.id() and FusionCache.get().num_fusions() == 2
    with pytest.raises(ValueError, match="already holds 2 fusions"):
        FusionCache.get().deserialize(path)
    FusionCache.reset()
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a serialized fuser FusionCache"):
        FusionCache.get().deserialize(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="cannot read"):
        FusionCache.get().deserialize(tmp_path / "missing.json")
