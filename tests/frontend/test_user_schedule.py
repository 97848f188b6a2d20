"""nvFuser's user ``schedule()`` hook and ``fd.sched`` (``fuser.frontend.user_schedule``)."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition, ParallelType
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


class Scaled(FusionDefinition):
    """nvFuser's user-schedule pattern on two outputs: split the first, bind the
    pieces to the grid and the block, replay on the other output, inline the rest."""

    factor = 4
    scale = 2.0  # a definition of its own per subclass (user schedules are per cached fusion)

    def definition(self) -> None:
        self.t0 = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        self.t1 = self.ops.mul(self.ops.tanh(self.t0), self.scale)
        self.t2 = self.ops.add(self.t1, 1.0)
        self.add_output(self.t1)
        self.add_output(self.t2)

    def schedule(self) -> None:
        self.sched.merge(self.t2, 0)
        self.sched.split(self.t2, 0, self.factor)
        self.sched.parallelize(self.t2, 0, ParallelType.grid_x)
        self.sched.parallelize(self.t2, 1, ParallelType.block_x)
        self.sched.transform_like(self.t2)
        self.sched.parallelize_like(self.t2)
        self.sched.inline_most()


def test_loop_transforms_are_the_kernel() -> None:
    """fd.sched transforms are written as iterdomain ops; the kernel is their loop nest
    (grid = 12 / 4 blocks of 4 threads here), it runs on the CPU kernel interpreter to
    the reference, and another split factor is another kernel."""
    from fuser.runtime.cpu_runner import run_segment_on_cpu

    fd = Scaled()
    x = _x()
    outs = fd.execute([x])  # the CPU: the reference interpreter
    np.testing.assert_allclose(outs[1], np.tanh(x) * 2 + 1, rtol=1e-6)
    ir = fd.sched.user_schedule_ir()
    assert "fuser.unscheduled" not in ir
    assert ir.count("iterdomain.loop") == 2 and "to BIDx" in ir and "to TIDx" in ir
    sched = fd._entry.last_user_schedule
    (t1, t2), lowered = run_segment_on_cpu(sched.fusion, [x])
    np.testing.assert_allclose(t1, np.tanh(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(t2, np.tanh(x) * 2 + 1, rtol=1e-6)
    (kernel,) = lowered.kernels
    assert kernel.block == (4, 1, 1) and kernel.grid == (3, 1, 1)
    code = fd.cuda_code_for([x])
    assert "__launch_bounds__(4)" in code and "blockIdx.x" in code

    class Scaled3(Scaled):
        factor = 3
        scale = 3.0

    fd3 = Scaled3()
    np.testing.assert_allclose(fd3.execute([x])[1], np.tanh(x) * 3 + 1, rtol=1e-6)
    other = fd3.cuda_code_for([x])
    assert "__launch_bounds__(3)" in other and "blockIdx.x" in other


def test_bad_loop_transforms_are_diagnostics() -> None:
    def user(body):  # noqa: ANN001, ANN202
        class User(FusionDefinition):
            def definition(self) -> None:
                self.t0 = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
                self.t1 = self.ops.exp(self.t0)
                self.add_output(self.t1)

            def schedule(self) -> None:
                body(self)

        return User()

    with pytest.raises(ValueError, match=r"fd.sched.split: .*loop axis"):
        user(lambda fd: fd.sched.split(fd.t1, 5, 2)).execute([_x()])
    with pytest.raises(ValueError, match=r"fd.sched.split: split factor 0 must be positive"):
        user(lambda fd: fd.sched.split(fd.t1, 0, 0)).execute([_x()])
    with pytest.raises(ValueError, match=r"fd.sched.parallelize: 'TIDx' is not a ParallelType"):
        user(lambda fd: fd.sched.parallelize(fd.t1, 0, "TIDx")).execute([_x()])
    with pytest.raises(ValueError, match=r"returned output #0 has no loop domain"):
        user(lambda fd: fd.sched.split(fd.t0, 0, 2)).execute([_x()])
    with pytest.raises(NotImplementedError, match=r"fd.sched.cache_after: not supported"):
        user(lambda fd: fd.sched.cache_after(fd.t0)).execute([_x()])


def test_loop_transforms_on_a_reduction_are_not_supported_yet() -> None:
    class Red(FusionDefinition):
        def definition(self) -> None:
            self.t0 = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            self.t1 = self.ops.sum(self.t0, [1])
            self.add_output(self.t1)

        def schedule(self) -> None:
            self.sched.split(self.t1, 0, 2)

    with pytest.raises(NotImplementedError, match=r"fd.sched.split: loop transforms on a fusion with reductions"):
        Red().execute([_x()])


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
