"""Import fuser from a source checkout without installing it.

``pyproject.toml`` maps the repository's top-level folders onto one namespace
(``fuser_ir/`` is ``fuser.ir``, ``passes/`` is ``fuser.passes``, ...), which an
installation (``pip install .`` or ``-e .``) carries out. Where nothing may be installed
(the device machine, a scratch copy of the repository) this script builds the same
namespace out of symbolic links::

    python3 tools/source_tree.py DEST [REPO]   # DEST/fuser/ir -> REPO/fuser_ir, ...
    PYTHONPATH=DEST python3 -c "import fuser.passes"

It reads only the standard library and ``pyproject.toml``'s
``[tool.setuptools.package-dir]``, so it runs before fuser is importable.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path


def package_dirs(repo: Path) -> dict[str, Path]:
    """``pyproject.toml``'s mapping of import packages to folders."""
    with open(repo / "pyproject.toml", "rb") as f:
        mapping = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    return {name: repo / folder for name, folder in mapping.items()}


def build(dest: Path, repo: Path) -> Path:
    """Make ``dest/<package path>`` a link to each mapped folder (the root package's
    files are linked one by one, so its subpackages can sit next to them). Returns
    ``dest``, the directory to put on ``sys.path``."""
    for name, folder in sorted(package_dirs(repo).items()):
        target = dest.joinpath(*name.split("."))
        if "." not in name:  # the root package: a real directory of links
            target.mkdir(parents=True, exist_ok=True)
            for entry in folder.iterdir():
                if entry.name != "__pycache__":
                    _link(target / entry.name, entry)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            _link(target, folder)
    return dest


def _link(path: Path, to: Path) -> None:
    if path.is_symlink() or path.exists():
        if path.is_symlink() and path.resolve() == to.resolve():
            return
        path.unlink()
    path.symlink_to(to.resolve())


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print("usage: source_tree.py DEST [REPO]", file=sys.stderr)
        return 2
    repo = Path(argv[1]) if len(argv) == 2 else Path(__file__).resolve().parent.parent
    print(build(Path(argv[0]), repo.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
