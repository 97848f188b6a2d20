"""``paused_gc`` (``fuser_ir/gc_pause.py``): the cyclic collector is off inside, back on
after (also after an exception), and a caller's own ``gc.disable()`` is kept."""

from __future__ import annotations

import gc

import pytest

from fuser.ir.gc_pause import paused_gc


def test_paused_inside_and_restored_after() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # nested: still off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("a pass failed")
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_driver_compiles_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiler driver's passes run with no cyclic collection."""
    import numpy as np

    from fuser import DataType, FusionDefinition
    from fuser.passes.segment import SegmentPass

    seen: list[bool] = []
    apply = SegmentPass.apply

    def spy(self, ctx, op):  # noqa: ANN001, ANN202
        seen.append(gc.isenabled())
        return apply(self, ctx, op)

    monkeypatch.setattr(SegmentPass, "apply", spy)
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(x, dims=[1]))
    fd.execute([np.ones((3, 5), np.float32)])
    assert seen == [False]
    assert gc.isenabled()
