"""Layering and packaging (issue 12): one ``fuser`` namespace over the repository's
folders, layers that import only downward (``lint-imports``, configured in
``pyproject.toml``), no import cycle, and a wheel whose only top-level name is ``fuser``.

``lint-imports`` and the cycle check read the import graph with grimp, which walks a
package's folders: they run in a tree of links laid out as an installation
(``tools/source_tree.py``), because the checkout's folders are named by layer
(``fuser_ir/``), not by import path (``fuser/ir/``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _linked(tmp_path: Path, repo: Path = ROOT) -> Path:
    """The fuser namespace of ``repo`` as links under ``tmp_path/src``."""
    dest = tmp_path / "src"
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "source_tree.py"), str(dest), str(repo)],
        check=True,
        capture_output=True,
    )
    return dest


def _lint_imports(src: Path, config: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` run where ``src`` holds the only ``fuser`` on the path (its
    working directory: import-linter puts it first on ``sys.path``)."""
    exe = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(exe), "--config", str(config), "--no-cache"],
        cwd=src,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def test_the_layers_contract_is_kept(tmp_path: Path) -> None:
    run = _lint_imports(_linked(tmp_path), ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout
    assert "layers: a layer imports only the layers below it KEPT" in run.stdout


def _copy_of_the_packages(dest: Path) -> Path:
    """The package folders, ``pyproject.toml`` and ``README.md`` of the checkout, copied
    (tracked and untracked-but-not-ignored files)."""
    folders = list(PYPROJECT["tool"]["setuptools"]["package-dir"].values())
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z", "--", *folders, "pyproject.toml", "README.md"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode().split("\0")
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest


@pytest.mark.parametrize(
    ("module", "upward", "importer", "imported"),
    [
        # the IR reaching up into the runtime (as kernel.py -> codegen -> runtime did)
        ("fuser_ir/shapes.py", "from fuser.runtime import gpu_arrays", "fuser.ir.shapes", "fuser.runtime.gpu_arrays"),
        # a lazy import inside a function counts too
        (
            "codegen/nvrtc.py",
            "def _f():\n    from fuser.runtime import cuda_driver\n",
            "fuser.codegen.nvrtc",
            "fuser.runtime.cuda_driver",
        ),
    ],
)
def test_an_upward_import_breaks_the_layers(
    tmp_path: Path, module: str, upward: str, importer: str, imported: str
) -> None:
    repo = _copy_of_the_packages(tmp_path / "repo")
    with open(repo / module, "a", encoding="utf-8") as f:
        f.write(f"\n{upward}\n")
    run = _lint_imports(_linked(tmp_path, repo), repo / "pyproject.toml")
    assert run.returncode != 0, run.stdout
    assert "BROKEN" in run.stdout
    assert f"{importer} -> {imported}" in run.stdout


_CYCLES = """
import json, sys
import grimp

graph = grimp.build_graph("fuser", exclude_type_checking_imports=True)
succ = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
index, low, stack, on, cycles = {}, {}, [], set(), []
def visit(v):  # Tarjan's strongly connected components
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in succ[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            cycles.append(sorted(comp))
sys.setrecursionlimit(10000)
for m in succ:
    if m not in index:
        visit(m)
print(json.dumps({"modules": len(succ), "cycles": cycles}))
"""


def test_no_import_cycles(tmp_path: Path) -> None:
    """No strongly connected component in the graph of every import fuser executes
    (module level and inside functions; ``if TYPE_CHECKING:`` imports never run)."""
    run = subprocess.run(
        [sys.executable, "-c", _CYCLES], cwd=_linked(tmp_path), capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    assert found["modules"] > 100  # the whole package was read, not just fuser/__init__
    assert found["cycles"] == []


def _folders_with_packages() -> set[str]:
    out = set()
    for name, folder in PYPROJECT["tool"]["setuptools"]["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if "__pycache__" not in rel.parts:
                out.add(".".join([name, *rel.parts]))
    return out


def test_the_package_list_covers_every_folder() -> None:
    """``pyproject.toml`` lists the packages explicitly (its folders are mapped): a new
    subpackage that is not listed would be missing from the wheel."""
    assert set(PYPROJECT["tool"]["setuptools"]["packages"]) == _folders_with_packages()


def test_the_source_checkout_finder_agrees_with_pyproject() -> None:
    from fuser import SOURCE_FOLDERS

    mapping = dict(PYPROJECT["tool"]["setuptools"]["package-dir"])
    assert mapping.pop("fuser") == "fuser"
    assert mapping == SOURCE_FOLDERS


def _python_with_path(code: str, cwd: Path, path: Path) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in ``cwd`` (outside the checkout) with ``path`` first on
    ``sys.path``; asserts it succeeded."""
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run


def test_the_public_api_is_the_frontends() -> None:
    """``fuser``'s lazy exports (static, so that importing ``fuser.ir`` stays light) are
    exactly ``fuser.frontend``'s."""
    import fuser
    import fuser.frontend

    assert fuser.__all__ == fuser.frontend.__all__
    assert all(getattr(fuser, n) is getattr(fuser.frontend, n) for n in fuser.__all__)


def test_a_checkout_on_the_path_imports_as_fuser(tmp_path: Path) -> None:
    """``PYTHONPATH=<checkout>`` (the device machine, a scratch copy) is enough: the
    checkout's ``fuser/__init__.py`` maps the layers' folders."""
    repo = _copy_of_the_packages(tmp_path / "repo")
    code = "import fuser.passes.segment, fuser.ir.dialects.fuser as d; print(d.__file__)"
    run = _python_with_path(code, tmp_path, repo)
    assert run.stdout.strip() == str(repo / "fuser_ir" / "dialects" / "fuser.py")


def test_the_wheel_adds_only_the_fuser_import_name(tmp_path: Path) -> None:
    """``pip install .`` (not editable): the distribution's only top-level import name is
    ``fuser``, and the installed copy imports and runs from anywhere."""
    pytest.importorskip("setuptools")
    repo = _copy_of_the_packages(tmp_path / "repo")  # the build writes build/ next to it
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(wheels), str(repo)],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("fuser-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"fuser", "fuser-0.1.0.dist-info"}
    top_level = [n for n in names if n.endswith("top_level.txt")]
    if top_level:
        assert zipfile.ZipFile(wheel).read(top_level[0]).decode().split() == ["fuser"]
    assert "fuser/ir/dialects/fuser.py" in names and "fuser/tools/fuser_opt.py" in names
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    code = (
        "import fuser, fuser.tools.fuser_opt, fuser.tools.fuser_run\n"
        "from fuser import DataType, FusionDefinition\n"
        "with FusionDefinition() as fd:\n"
        "    t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n"
        "    fd.add_output(fd.ops.relu(t))\n"
        "import numpy as np\n"
        "print(fuser.__file__, fd.execute([np.array([-1.0, 2.0], np.float32)])[0].tolist())\n"
    )
    run = _python_with_path(code, tmp_path, target)
    where, values = run.stdout.split(" ", 1)
    assert where == str(target / "fuser" / "__init__.py")
    assert values.strip() == "[0.0, 2.0]"
