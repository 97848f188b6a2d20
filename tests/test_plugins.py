"""A third-party ``xdsl.universe`` plugin (``tests/plugins/fuser_plugin_example``) adds a
pass and a dialect to ``fuser-opt`` without editing fuser.

The plugin is "installed" into a temporary directory as a ``.dist-info`` holding the
entry points of its pyproject.toml, with its sources on the path: what ``pip install``
writes, without network or a build."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from fuser.tools.fuser_opt import main as opt_main

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "tests" / "plugins" / "fuser_plugin_example"

FUSION = """
fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  fuser.output %a : !fuser.tensor<4xf32>
}
example.marker
"""


def install(site: Path, name: str, entry_points: dict[str, str]) -> None:
    """Write the ``.dist-info`` of distribution ``name`` with ``xdsl.universe`` entry
    points into ``site``."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    info.joinpath("entry_points.txt").write_text(f"[xdsl.universe]\n{lines}")


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    site = tmp_path / "site"
    install(site, project["name"], project["entry-points"]["xdsl.universe"])
    monkeypatch.syspath_prepend(str(PLUGIN))
    monkeypatch.syspath_prepend(str(site))
    return site


def _run(tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "in.mlir"
    path.write_text(FUSION)
    opt_main([str(path), *args])
    return capsys.readouterr().out


@pytest.mark.parametrize("args", [["--example-tag-fusions"], ["-p", "example-tag-fusions"]])
def test_plugin_pass_is_a_flag_and_a_pipeline_name(
    plugin_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    out = _run(tmp_path, ["--canonicalize", *args], capsys)
    assert "fuser.fusion @f(%a: !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes" in out
    assert "example.visited" in out
    assert "example.marker" in out  # the plugin's dialect parses and prints


def test_plugin_pass_is_in_the_help(
    plugin_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        opt_main(["--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--example-tag-fusions run the example-tag-fusions pass (plugin fuser_plugin_example)" in out


def test_plugin_in_a_fresh_process(plugin_site: Path, tmp_path: Path) -> None:
    path = tmp_path / "in.mlir"
    path.write_text(FUSION)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(plugin_site), str(PLUGIN), str(ROOT)]))
    proc = subprocess.run(
        [sys.executable, "-m", "fuser.tools.fuser_opt", str(path), "--example-tag-fusions"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "example.visited" in proc.stdout


@pytest.mark.parametrize(
    ("entry_point", "message"),
    [
        ("no_such_module:U", "plugin 'broken' (no_such_module:U) cannot be loaded: ModuleNotFoundError"),
        ("fuser_plugin_example:TagFusions", "plugin 'broken' (fuser_plugin_example:TagFusions) is a"),
        ("fuser_plugin_example:EXAMPLE_UNIVERSE", "plugins 'broken' and 'fuser_plugin_example' both define"),
        ("fuser.tools.universe:FUSER_UNIVERSE", None),  # fuser's own universe seen twice: ignored
    ],
)
def test_broken_plugins_are_diagnostics(
    plugin_site: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    entry_point: str,
    message: str | None,
) -> None:
    install(plugin_site, "broken", {"broken": entry_point})
    path = tmp_path / "in.mlir"
    path.write_text(FUSION)
    if message is None:
        opt_main([str(path)])
        assert "example.marker" in capsys.readouterr().out
        return
    with pytest.raises(SystemExit) as exc:
        opt_main([str(path)])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("fuser-opt: error: xdsl.universe ")
    assert message in err and "Traceback" not in err


def test_plugin_may_not_redefine_a_fuser_pass(
    plugin_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pkg = tmp_path / "clash"
    pkg.mkdir()
    pkg.joinpath("clash_plugin.py").write_text(
        "from xdsl.universe import Universe\n"
        "from fuser.passes.canonicalize import CanonicalizePass\n"
        "U = Universe(all_passes={'canonicalize': lambda: CanonicalizePass})\n"
    )
    sys.path.insert(0, str(pkg))
    try:
        install(plugin_site, "clash", {"clash": "clash_plugin:U"})
        with pytest.raises(SystemExit) as exc:
            opt_main(["--canonicalize"])
    finally:
        sys.path.remove(str(pkg))
    assert exc.value.code == 1
    assert "defines the pass 'canonicalize', which xDSL or fuser already defines" in (
        capsys.readouterr().err
    )
