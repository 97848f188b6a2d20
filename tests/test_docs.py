"""The examples in README.md and docs/ are executed, so they cannot drift from the code.

See ``tests/docs_check.py`` for the markers. Each page runs in its own scratch copy of
the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_check import ROOT, blocks, check_block, matches, scratch_copy, unmarked

PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])


def _ids(pages: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in pages]


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_example_block_is_checked(page: Path) -> None:
    missing = [f"{b.page.name}:{b.line} ({b.lang})" for b in unmarked(page)]
    assert not missing, (
        "blocks without a '<!-- check: ... -->' marker on the line before them "
        "(see tests/docs_check.py): " + ", ".join(missing)
    )


CHECKED = [p for p in PAGES if any(b.kind not in (None, "skip") for b in blocks(p))]


@pytest.mark.parametrize("page", CHECKED, ids=_ids(CHECKED))
def test_page_examples_hold(page: Path, tmp_path: Path) -> None:
    repo = scratch_copy(tmp_path)
    failures = []
    for b in blocks(page):
        err = check_block(b, repo)
        if err:
            failures.append(f"{page.relative_to(ROOT)}:{b.line} ({b.kind} {b.arg}):\n{err}")
    assert not failures, "\n\n".join(failures)


def test_matches_trims_with_ellipses() -> None:
    assert matches("a\n...\nd\n", "a\nb\nc\nd\n") is None
    assert matches("x = ... y\n", "x = 1 + 2 y\n") is None
    assert matches("a\nd\n", "a\nb\nd\n") is not None  # no "..." line: no skipping
    assert matches("a\n", "a\nb\n") is not None  # extra output is a difference
    assert matches("a\n...\n", "a\nb\n") is None
    assert matches("a\nz\n", "a\nb\n") is not None
