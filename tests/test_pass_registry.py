"""Lazy pass registration (issue 12, item 3): ``fuser.passes.all_passes`` finds the passes by
reading the package's files, and a pass module is imported only when its pass is asked
for; building xDSL's multiverse (what every plain ``xdsl-opt`` run does once fuser is
installed) imports no pass module and none of codegen, schedulers or runtime; loading
the fuser dialect from it installs the ``fuser.schedule`` check (which the scheduler
layer defines, and which importing every pass used to install as a side effect)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.passes import ModulePass

from fuser import passes
from fuser.passes import all_passes, scan


def _imported_registry() -> dict[str, type[ModulePass]]:
    """The passes found the eager way: import every module, collect the classes."""
    found: dict[str, type[ModulePass]] = {}
    for info in pkgutil.iter_modules(passes.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"fuser.passes.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(obj, ModulePass)
                and obj is not ModulePass
                and obj.__module__ == module.__name__
                and isinstance(getattr(obj, "name", None), str)
            ):
                found[obj.name] = obj
    return found


def test_file_scan_finds_what_importing_finds() -> None:
    eager = _imported_registry()
    lazy = {name: factory() for name, factory in all_passes().items()}
    assert lazy == eager
    assert {"segment", "strip-bookend-views", "mark-aliases", "lower-to-kernels"} <= set(lazy)


def test_building_the_multiverse_imports_no_pass_module() -> None:
    """``xdsl-opt``'s registry of every installed dialect and pass imports, of fuser,
    the registration module, the pass package's ``__init__`` (which scans files) and
    the IR: no pass, scheduler, codegen, runtime or frontend module."""
    code = (
        "import sys\n"
        "from xdsl.universe import Universe\n"
        "u = Universe.get_multiverse()\n"
        "assert 'segment' in u.all_passes and 'fuser' in u.all_dialects, 'fuser not registered'\n"
        "mods = sorted(m for m in sys.modules if m.split('.')[0] == 'fuser')\n"
        "print(' '.join(mods))\n"
        "from fuser.ir.dialects.fuser import FusionOp\n"
        "assert FusionOp.SCHEDULE_CHECK is None\n"
        "u.all_dialects['fuser']()\n"
        "assert FusionOp.SCHEDULE_CHECK is not None, 'no fuser.schedule check'\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    mods = run.stdout.split()
    assert {"fuser", "fuser.passes", "fuser.tools", "fuser.tools.universe"} <= set(mods)
    above_ir = [
        m for m in mods if m not in ("fuser", "fuser.passes", "fuser.tools", "fuser.tools.universe")
        and not m.startswith("fuser.ir")
    ]
    assert above_ir == []


def test_scan_reads_annotated_names_and_attribute_bases(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "import xdsl.passes\n"
        "class One(xdsl.passes.ModulePass):\n"
        "    name: str = 'one'\n"
        "class Helper:\n"
        "    name = 'not-a-pass'\n"
    )
    (tmp_path / "b.py").write_text(
        "from xdsl.passes import ModulePass\nclass Two(ModulePass):\n    name = 'two'\n"
    )
    (tmp_path / "_private.py").write_text(
        "from xdsl.passes import ModulePass\nclass Three(ModulePass):\n    name = 'three'\n"
    )
    assert scan(tmp_path, "pkg") == {"one": ("pkg.a", "One"), "two": ("pkg.b", "Two")}


def test_scan_rejects_a_name_defined_twice(tmp_path: Path) -> None:
    for stem in ("a", "b"):
        (tmp_path / f"{stem}.py").write_text(
            f"from xdsl.passes import ModulePass\nclass P{stem}(ModulePass):\n    name = 'same'\n"
        )
    with pytest.raises(
        RuntimeError, match="pass name 'same' is defined twice: pkg.a.Pa and pkg.b.Pb"
    ):
        scan(tmp_path, "pkg")
