"""``benchmarks/model_families.py``: a tiny model's training step through the backend
against eager, as a table row and a JSONL row; an unknown family is an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from benchmarks import model_families  # noqa: E402


def test_a_family_row_matches_eager(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "rows.jsonl"
    assert model_families.main(["--only", "distilbert", "--json", str(out)]) == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["family"] == "distilbert" and row["loss_fuser"] == pytest.approx(row["loss_eager"], rel=1e-5)
    assert row["grad_err"] < 1e-5 and row["failed_partitions"] == [] and row["fell_back"] == []
    # The lookups and attention stay in torch; everything else runs in fuser.
    assert set(row["in_torch"]) == {
        "aten.embedding.default", "aten.embedding_dense_backward.default",
        "aten._scaled_dot_product_flash_attention_for_cpu.default",
        "aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
    }
    assert row["fuser_ops"] > 20 * row["torch_ops"]
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("| family | loss eager |") and table[2].startswith("| distilbert | ")


def test_every_family_builds_and_an_unknown_one_is_an_error(capsys: Any) -> None:
    assert len(model_families.FAMILIES) == 24
    for name in ("t5", "vit", "mixtral"):
        model = model_families.build(name)
        assert set(model_families.batch(model)) <= {"input_ids", "labels", "pixel_values"}
    with pytest.raises(SystemExit):
        model_families.main(["--only", "gpt5"])
    assert "unknown families ['gpt5']" in capsys.readouterr().err
