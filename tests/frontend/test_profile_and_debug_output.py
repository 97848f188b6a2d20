"""``fd.execute(profile=True)``/``fd.profile()`` (``fuser.frontend.profiling``) and
``fd.execute(capture_debug_output=True)``/``fd.debug_output()`` on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.frontend.profiling import FusionProfile


def _add_sum_sum() -> FusionDefinition:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.sum(fd.ops.add(a, b), dims=[-1]), dims=[-1]))
    return fd


def test_profile_before_a_profiled_run_is_a_value_error() -> None:
    fd = _add_sum_sum()
    x = np.ones((2, 5), np.float32)
    with pytest.raises(ValueError, match="not previously called with profiling enabled"):
        fd.profile()
    fd.execute([x, x])
    with pytest.raises(ValueError, match="not previously called with profiling enabled"):
        fd.profile()


def test_a_segmented_run_has_one_timed_kernel_per_segment() -> None:
    fd = _add_sum_sum()
    x = np.ones((2, 5), np.float32)
    (out,) = fd.execute([x, x], profile=True)
    assert float(out) == 20.0
    prof = fd.profile()
    assert isinstance(prof, FusionProfile)
    assert prof.fusion_id == fd.id() and prof.device == "cpu" and prof.timer == "host wall clock"
    assert prof.segments == 2 == len(prof.kernel_profiles)
    assert [k.scheduler for k in prof.kernel_profiles] == ["reduction", "reduction"]
    assert [k.segment_id for k in prof.kernel_profiles] == [0, 1]
    assert all(k.time_ms is not None and k.time_ms >= 0 for k in prof.kernel_profiles)
    assert prof.kernel_time_ms is not None and prof.kernel_time_ms <= prof.host_time_ms
    assert prof.kernel_profiles[0].input_bytes == 2 * x.nbytes and prof.input_bytes == 2 * x.nbytes


def test_a_whole_fusion_is_one_segment_with_its_scheduler() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(a))
    fd.execute([np.zeros(8, np.float32)], profile=True)
    prof = fd.profile()
    assert prof.segments == 1 and prof.kernel_profiles[0].scheduler == "pointwise"
    assert prof.output_bytes == 32


def test_a_user_schedule_is_profiled_as_user() -> None:
    class Mine(FusionDefinition):
        def definition(self) -> None:
            a = self.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
            self.add_output(self.ops.neg(a))

        def schedule(self) -> None:
            pass

    fd = Mine()
    fd.execute([np.ones(3, np.float32)], profile=True)
    assert fd.profile().fusion_id >= 0
    assert [k.scheduler for k in fd.profile().kernel_profiles] == ["user"]


def test_debug_output_is_none_unless_captured() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(a))
    x = np.zeros(4, np.float32)
    fd.execute([x])
    assert fd.debug_output() is None
    fd.execute([x], capture_debug_output=True)
    assert fd.debug_output() == ""
    fd.execute([x])
    assert fd.debug_output() is None


def test_captured_debug_output_holds_what_the_run_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fuser.frontend import execution

    def loud(fusion, flat):  # noqa: ANN001, ANN202 - an executor that prints
        print("running", fusion.sym_name.data)
        return execution.reference_executor(fusion, flat)

    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(a))
    fd.execute([np.zeros(4, np.float32)], executor=loud, capture_debug_output=True)
    assert fd.debug_output() == f"running nvfuser_fusion_id{fd.id()}\n"
    assert capsys.readouterr().out == ""
