"""``fd.execute`` runs the compiler driver's pipeline (issue 13): the pipeline is
printable, reproducible with ``fuser-opt`` + ``fuser-run``, and changing it changes
what is compiled (``fd.plan``, the CUDA of ``fd.generate_cuda_code``)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.runtime.driver import PASSES


def gelu_with_bookend_views() -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.reshape(t0, [4, 8, 64])
        t3 = fd.ops.mul(t1, 0.5)
        t6 = fd.ops.erf(fd.ops.mul(t1, 0.707107))
        t9 = fd.ops.mul(t3, fd.ops.add(t6, 1.0))
        fd.add_output(fd.ops.reshape(t9, [32, 64]))
    return fd


def test_the_default_pipeline_is_the_drivers_and_fuser_opt_prints_it() -> None:
    fd = gelu_with_bookend_views()
    assert fd.pipeline == PASSES
    out = subprocess.run(
        [sys.executable, "-m", "fuser.tools.fuser_opt", "--print-pipeline"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert out == ",".join(fd.pipeline)


def test_dropping_strip_bookend_views_changes_what_is_compiled() -> None:
    fd = gelu_with_bookend_views()
    x = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    (want,) = fd.execute([x])
    plan = fd.plan([x])
    code = fd.generate_cuda_code([x])
    assert [v.ops for v in plan.host_views] == [("hir.reshape",), ("hir.reshape",)]
    try:
        fd.pipeline = [p for p in PASSES if p != "strip-bookend-views"]
        assert "strip-bookend-views" not in fd.pipeline
        (got,) = fd.execute([x])
        other = fd.plan([x])
        assert other.host_views == ()  # the reshapes stay in the kernel
        assert fd.generate_cuda_code([x]) != code
        np.testing.assert_allclose(got, want, rtol=1e-6)
    finally:
        fd.pipeline = PASSES
    assert fd.generate_cuda_code([x]) == code


def test_an_unknown_pass_is_an_error_naming_it() -> None:
    fd = gelu_with_bookend_views()
    with pytest.raises(ValueError, match="pipeline: unknown pass 'strip-views'"):
        fd.pipeline = ["canonicalize", "strip-views"]
    assert fd.pipeline == PASSES


def test_fuser_opt_then_fuser_run_gives_what_execute_gives(tmp_path) -> None:  # noqa: ANN001
    fd = gelu_with_bookend_views()
    x = np.random.default_rng(1).standard_normal((32, 64)).astype(np.float32)
    (want,) = fd.execute([x])
    src = tmp_path / "gelu.mlir"
    src.write_text(fd.fusion_ir())
    spec = subprocess.run(
        [sys.executable, "-m", "fuser.tools.fuser_opt", "--print-pipeline=0=32x64"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    compiled = tmp_path / "compiled.mlir"
    subprocess.run(
        [sys.executable, "-m", "fuser.tools.fuser_opt", str(src), "-p", spec, "-o", str(compiled)],
        check=True,
    )
    assert "hir.program @main" in compiled.read_text()
    np.savez(tmp_path / "in.npz", arg0=x)
    subprocess.run(
        [sys.executable, "-m", "fuser.tools.fuser_run", str(compiled), "--inputs", str(tmp_path / "in.npz"),
         "-o", str(tmp_path / "out.npz")],
        check=True, capture_output=True,
    )
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(out["out0"], want)
