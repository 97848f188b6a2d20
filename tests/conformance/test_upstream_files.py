"""The upstream files are byte-identical to the recorded blobs; the CPU rewrites are the
documented ones, fire as often as recorded, and change nothing else."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance.prepare import (
    EXPECTED_COUNTS,
    FILES,
    RULES,
    UPSTREAM,
    git_blob_sha1,
    prepare,
)

HERE = Path(__file__).resolve().parent


def _recorded() -> list[tuple[str, str]]:
    rows = []
    for line in (HERE / "UPSTREAM").read_text().splitlines():
        if re.fullmatch(r"[0-9a-f]{40} \S+ \S+", line):
            sha, _, local = line.split()
            rows.append((sha, local))
    return rows


def test_git_blob_sha1_matches_git() -> None:
    # `printf 'hello\n' | git hash-object --stdin`
    assert git_blob_sha1(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_upstream_files_are_byte_identical() -> None:
    rows = _recorded()
    assert {local for _, local in rows} >= {f"upstream/{p}" for p in FILES}
    for sha, local in rows:
        assert git_blob_sha1((HERE / local).read_bytes()) == sha, f"{local} differs from upstream"


def test_rewrites_are_the_recorded_ones(tmp_path: Path) -> None:
    assert prepare(tmp_path) == EXPECTED_COUNTS
    assert {r.name for r in RULES} == set(EXPECTED_COUNTS)
    for src, dst in FILES.items():
        original = (UPSTREAM / src).read_text().splitlines()
        prepared = (tmp_path / dst).read_text().splitlines()
        assert len(original) == len(prepared)
        for a, b in zip(original, prepared, strict=True):
            if a != b:  # every changed line is explained by a rule
                assert any(re.search(r.pattern, a) for r in RULES), a
