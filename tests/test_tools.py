"""The drivers: ``fuser-opt`` pass flags and their order, error exits without a
traceback, ``fuser-run`` on the examples."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fuser.tools.fuser_opt import FuserOptMain, rewrite_pass_flags
from fuser.tools.fuser_opt import main as opt_main
from fuser.tools.fuser_run import main as run_main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

GOOD = """
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32> {
  %0 = fuser.permute %a {dims = array<i64: 1, 0>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32>
  %1 = fuser.permute %0 {dims = array<i64: 1, 0>} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<4x8xf32>
  %2 = fuser.permute %1 {dims = array<i64: 1, 0>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32>
  fuser.output %2 : !fuser.tensor<8x4xf32>
}
"""

BAD = """
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf16> {
  %0 = fuser.add %a, %a : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf16>
  fuser.output %0 : !fuser.tensor<4x8xf16>
}
"""


def _write(tmp_path: Path, text: str, name: str = "in.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _pass_names(argv: list[str]) -> list[str]:
    return [p.name for p in FuserOptMain(args=argv).pipeline.passes]


# ---- fuser-opt ---------------------------------------------------------------------------


def test_flags_and_pipelines_keep_command_line_order(tmp_path: Path) -> None:
    f = _write(tmp_path, GOOD)
    assert _pass_names([f, "--cse", "-p", "canonicalize,dce", "--canonicalize"]) == [
        "cse",
        "canonicalize",
        "dce",
        "canonicalize",
    ]
    assert _pass_names(["-p", "dce", "--cse", f]) == ["dce", "cse"]
    assert _pass_names(["--cse", "-p", "dce", f]) == ["cse", "dce"]
    assert _pass_names([f]) == []


def test_flag_with_options_becomes_a_pass_spec() -> None:
    names = ["canonicalize", "cse"]
    assert rewrite_pass_flags(["--canonicalize=a=1 b=2", "x.mlir"], names) == [
        "--passes=canonicalize{a=1 b=2}",
        "x.mlir",
    ]
    assert rewrite_pass_flags(["--cse={}", "--print-op-generic"], names) == [
        "--passes=cse",
        "--print-op-generic",
    ]
    # Not a pass: left alone; after "--" nothing is rewritten.
    assert rewrite_pass_flags(["--output-file=o.mlir", "--", "--cse=1"], names) == [
        "--output-file=o.mlir",
        "--",
        "--cse=1",
    ]


def test_every_pass_is_a_flag(tmp_path: Path) -> None:
    from fuser.passes import all_passes

    f = _write(tmp_path, GOOD)
    for name in all_passes():
        assert _pass_names([f, f"--{name}"]) == [name]


def test_canonicalize_flag_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path, GOOD)
    opt_main([f, "--canonicalize"])
    out = capsys.readouterr().out
    assert out.count("fuser.permute") == 1
    assert "dims = array<i64: 1, 0>" in out


def test_debug_schedulers_sets_the_option_of_every_select_schedulers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--debug-schedulers`` is ``debug=true`` on each select-schedulers of the
    pipeline; no environment variable changes what a pass does."""
    f = _write(tmp_path, GOOD)
    argv = [f, "-p", "canonicalize,select-schedulers", "--select-schedulers", "--debug-schedulers"]
    passes = FuserOptMain(args=argv).pipeline.passes
    assert [getattr(p, "debug", None) for p in passes] == [None, True, True]
    monkeypatch.setenv("FUSER_DEBUG_SCHEDULERS", "1")  # the variable the pass once read
    opt_main([f, "--select-schedulers"])
    assert "fuser.schedule_rejections" not in capsys.readouterr().out
    opt_main([f, "--select-schedulers", "--debug-schedulers"])
    assert "fuser.schedule_rejections" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        (BAD, [], "fuser.add: result #0 has type !fuser.tensor<4x8xf16>"),
        (BAD, ["--canonicalize"], "fuser.add: result #0"),
        ("fuser.fusion @f(%a : !fuser.tensor<4xf32>) {\n  fuser.oops\n}\n", [], "parse error at"),
        (GOOD, ["-p", "no-such-pass"], "Unrecognized passes: ['no-such-pass']"),
        (GOOD, ["--canonicalize=bogus=1"], "bogus"),
    ],
)
def test_errors_exit_1_with_a_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, args: list[str], message: str
) -> None:
    f = _write(tmp_path, text)
    with pytest.raises(SystemExit) as exc:
        opt_main([f, *args])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("fuser-opt: error: ")
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args",
    [
        ["--bind-sizes=sizes=0=8x1024"],
        ["-p", "bind-sizes{sizes=0=8x1024"],
        ["-p", 'select-schedulers{sizes="0=8x1024"}'],
        ["-p", ",,"],
        ["-t", "cuda{"],
        ["-t", "no-such-target"],
        ["--no-such-flag"],
        ["-p", 'bind-sizes{sizes="0=8x1x2"},lower-to-kernels'],
    ],
)
def test_malformed_options_exit_1_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    f = _write(tmp_path, GOOD.replace("4x8", "?x?").replace("8x4", "?x?"))
    with pytest.raises(SystemExit) as exc:
        opt_main([f, *args])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "error: " in err
    assert "Traceback" not in err and "internal error" not in err


def test_missing_input_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        opt_main([str(tmp_path / "nope.mlir")])
    assert exc.value.code == 1
    assert "cannot open input file" in capsys.readouterr().err


def test_verify_diagnostics_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path, BAD)
    opt_main([f, "--verify-diagnostics"])
    assert "fuser.add: result #0" in capsys.readouterr().out


def test_console_script_has_no_traceback(tmp_path: Path) -> None:
    f = _write(tmp_path, BAD)
    proc = subprocess.run(
        [sys.executable, "-m", "fuser.tools.fuser_opt", f], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 1
    assert "fuser.add" in proc.stderr and "Traceback" not in proc.stderr


# ---- fuser-run ---------------------------------------------------------------------------


def test_run_transpose_example_matches_numpy(tmp_path: Path) -> None:
    out = tmp_path / "out.npz"
    run_main([str(EXAMPLES / "transpose_bookend_views.mlir"), "--seed", "3", "-o", str(out)])
    data = np.load(out)
    x = data["arg0"]
    assert x.shape == (768, 128, 64)
    want = x.reshape(64, 12, 128, 64).transpose(0, 2, 1, 3).reshape(8192, 768)
    np.testing.assert_array_equal(data["out0"], want)


def test_run_sum_broadcast_add_with_shapes(tmp_path: Path) -> None:
    out = tmp_path / "out.npz"
    path = str(EXAMPLES / "sum_broadcast_add.mlir")
    run_main([path, "--shapes", "3x5", "3x5", "-o", str(out)])
    data = np.load(out)
    want = data["arg1"] + data["arg0"].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(data["out0"], want, rtol=1e-6)
    # --inputs from a file reproduces the run.
    inputs = tmp_path / "in.npz"
    np.savez(inputs, arg0=data["arg0"], arg1=data["arg1"])
    out2 = tmp_path / "out2.npz"
    run_main([path, "--inputs", str(inputs), "-o", str(out2)])
    np.testing.assert_array_equal(np.load(out2)["out0"], data["out0"])


def test_run_prints_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    run_main([str(EXAMPLES / "layer_norm.mlir")])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("out0: shape (256, 1024) float16")
    assert lines[2].startswith("out2: shape (256, 1) float32")


def test_run_seed_changes_inputs(tmp_path: Path) -> None:
    path = str(EXAMPLES / "sum_broadcast_add.mlir")
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"o{seed}.npz"
        run_main([path, "--shapes", "2x2", "2x2", "--seed", seed, "-o", str(out)])
        outs.append(np.load(out)["out0"])
    assert not np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sum_broadcast_add.mlir"], "has symbolic extents: give its shape with --shapes"),
        (["sum_broadcast_add.mlir", "--shapes", "3x5"], "--shapes has 1 entries for 2 tensor inputs"),
        (["sum_broadcast_add.mlir", "--shapes", "3x5", "3"], "has 1 extents, expected 2"),
        (["gelu_bookend_views.mlir", "--shapes", "8x8"], "does not match the declared 8192"),
        (["gelu_bookend_views.mlir", "--fusion", "nope"], "no fusion @nope in the module (fusions: @gelu)"),
        (["missing.mlir"], "cannot open input file"),
        (["layer_norm.mlir", "-o", "/nonexistent-dir/out.npz"], "cannot write '/nonexistent-dir/out.npz'"),
        (["sum_broadcast_add.mlir", "--shapes", "3000000x3000000", "3000000x3000000"], "do not fit in this machine's memory"),
    ],
)
def test_run_errors(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        run_main([str(EXAMPLES / args[0]), *args[1:]])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_run_module_with_several_fusions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    two = GOOD + GOOD.replace("@f", "@g")
    f = _write(tmp_path, two)
    with pytest.raises(SystemExit):
        run_main([f])
    assert "pick one with --fusion" in capsys.readouterr().err
    run_main([f, "--fusion", "g"])
    assert capsys.readouterr().out.startswith("out0: shape (8, 4) float32")
