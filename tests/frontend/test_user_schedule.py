"""nvFuser's user ``schedule()`` hook and ``fd.sched`` (``fuser.frontend.user_schedule``)."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.frontend.building import CompletedDefinitionError


def _x(n: int = 4) -> np.ndarray:
    return np.linspace(-1, 1, n * 3, dtype=np.float32).reshape(n, 3)


class Sinh(FusionDefinition):
    calls = 0

    def definition(self) -> None:
        self.t0 = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        self.add_output(self.ops.sinh(self.t0))

    def schedule(self) -> None:
        type(self).calls += 1
        assert "fuser.unscheduled" in self.sched.user_schedule_ir()


def test_first_execute_makes_the_user_schedule_and_runs_it() -> None:
    Sinh.calls = 0
    fd = Sinh()
    (out,) = fd.execute([_x()])
    np.testing.assert_allclose(out, np.sinh(_x()), rtol=1e-6)
    assert Sinh.calls == 1
    ir = fd.sched.user_schedule_ir()
    assert "fuser.unscheduled" in ir and "fuser.sinh" in ir
    fd.execute([_x()])
    assert Sinh.calls == 1  # the layout has its schedule
    # Its kernel: one thread of one block does every element (an empty schedule).
    code = fd.last_cuda_code()
    assert "__launch_bounds__(1)" in code and "sinhf(" in code
    assert fd.cuda_code_for([_x()]) == code
    assert fd.last_scheduled_fusion_ir() == ir
    # override_user_schedule: the automatic schedulers
    assert "__launch_bounds__(1)" not in fd.cuda_code_for([_x()], override_user_schedule=True)


def test_a_definition_without_schedule_says_so() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.relu(t))
    assert fd.sched.user_schedule_ir() == "User schedule is not defined."


def test_defining_an_op_in_schedule_is_rejected() -> None:
    class Bad(Sinh):
        # User schedules are kept per cached fusion and layout (as nvFuser's): a
        # definition of its own, so that its schedule() runs.
        def definition(self) -> None:
            self.t0 = self.define_tensor(
                shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float
            )
            self.add_output(self.ops.cosh(self.t0))

        def schedule(self) -> None:
            self.ops.relu(self.t0)

    with pytest.raises(RuntimeError, match="Attempting to add to a completed definition!"):
        Bad().execute([_x()])
    with pytest.raises(CompletedDefinitionError):
        Bad().execute([_x()])


def test_ops_after_the_with_block_are_rejected() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.relu(t))
    for add in (lambda: fd.ops.exp(t), lambda: fd.define_scalar(1.0), lambda: fd.add_output(t)):
        with pytest.raises(RuntimeError, match="Attempting to add to a completed definition!"):
            add()


def test_scheduling_calls_are_not_implemented() -> None:
    class Split(Sinh):
        def definition(self) -> None:
            self.t0 = self.define_tensor(
                shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float
            )
            self.add_output(self.ops.tanh(self.t0))

        def schedule(self) -> None:
            self.sched.split(self.t0, 0, 2)

    with pytest.raises(NotImplementedError, match=r"fd.sched.split: .*no transforms"):
        Split().execute([_x()])


def test_a_reduction_is_a_serial_loop_nest_and_a_chain_of_them_a_diagnostic() -> None:
    """A user schedule without transforms is one thread of one block: a row sum and a
    column var_mean fold serially, the output at the input's shape is an apply kernel;
    every kernel runs on the CPU interpreter to the reference. Softmax's chain of
    reductions is no loop nest: a RuntimeError naming the op, no traceback."""
    from fuser.runtime.cpu_runner import run_segment_on_cpu

    class Stats(FusionDefinition):
        def definition(self) -> None:
            t = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            self.add_output(self.ops.sum(t, dims=[1]))
            var, mean = self.ops.var_mean(t, dims=[0], correction=1, keepdim=True)
            self.add_output(self.ops.sub(t, mean))
            self.add_output(var)

        def schedule(self) -> None:
            pass

    fd = Stats()
    x = _x(5)
    want = fd.execute([x])  # the CPU reference runs it
    np.testing.assert_allclose(want[0], x.sum(1), rtol=1e-6)
    (sched,) = fd._entry.user_schedules.values()  # type: ignore[attr-defined]
    got, lowered = run_segment_on_cpu(sched.fusion, [x])
    assert {(k.grid, k.block) for k in lowered.kernels} == {((1, 1, 1), (1, 1, 1))}
    assert len(lowered.kernels) == 3  # the row sum; the column statistics, then their apply
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert "__launch_bounds__(1)" in fd.last_cuda_code()

    class Softmax(FusionDefinition):
        def definition(self) -> None:
            t = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            e = self.ops.exp(self.ops.sub(t, self.ops.max(t, dims=[1], keepdim=True)))
            self.add_output(self.ops.div(e, self.ops.sum(e, dims=[1], keepdim=True)))

        def schedule(self) -> None:
            pass

    fd2 = Softmax()
    fd2.execute([x])
    with pytest.raises(RuntimeError, match="the user schedule has no kernel: fuser.max"):
        fd2.last_cuda_code()
