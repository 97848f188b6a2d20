"""Collects nvFuser's frontend suite, prepared for the CPU, and marks what cannot pass yet.

At import, ``prepare.prepare`` writes the rewritten copies of ``upstream/`` to a
temporary folder (package ``python``, as upstream imports it) and puts that folder and
``shim/`` (the test-only ``nvfuser`` module) on ``sys.path``; ``test_conformance.py``
imports the upstream test class from there. ``SKIPS`` and ``XFAILS`` (``known.py``) are
applied by test name; an xfail is strict, so a test that starts passing fails CI until
it is taken off the list.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from tests.conformance.known import SKIPS, XFAILS
from tests.conformance.prepare import prepare

HERE = Path(__file__).resolve().parent
collect_ignore_glob = ["upstream/*", "shim/*"]

PREPARED = Path(tempfile.mkdtemp(prefix="fuser-conformance-"))
REWRITES = prepare(PREPARED)
for _path in (str(HERE / "shim"), str(PREPARED)):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not item.nodeid.startswith("tests/conformance/test_conformance.py::TestNvFuserFrontend"):
            continue
        name = item.name
        if name in SKIPS:
            item.add_marker(pytest.mark.skip(reason=SKIPS[name]))
        elif name in XFAILS:
            item.add_marker(pytest.mark.xfail(reason=XFAILS[name], strict=True))
