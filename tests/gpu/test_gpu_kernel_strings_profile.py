"""On the GPU: nvFuser's kernel strings from the GPU plans (``kernel_strings``), a user
``schedule()``'s serial kernel, ``fd.profile()``, and integer division as torch's."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu


def test_kernel_strings_of_gpu_runs() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.cosh(a))
    x = torch.randn(16, 8, device="cuda")
    fd.execute([x])
    code = fd.last_cuda_code()
    assert "coshf(" in code and fd.cuda_code_for([x]) == code
    assert len(fd.cuda_code_for([x], intrinsic_code=True)) > len(code)
    assert "fuser.schedule" in fd.last_scheduled_fusion_ir()
    assert "iterdomain.loop" in fd.scheduled_fusion_ir_for([x], tensor_transforms=True)
    with pytest.raises(RuntimeError, match="not compiled"):
        fd.cuda_code_for([torch.randn(64, 64, device="cuda")])


def test_user_schedule_runs_the_serial_kernel() -> None:
    class Sinh(FusionDefinition):
        def definition(self) -> None:
            t = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            self.add_output(self.ops.sinh(self.ops.neg(t)))

        def schedule(self) -> None:
            pass

    x = torch.randn(33, 7, device="cuda")
    fd = Sinh()
    (out,) = fd.execute([x], profile=True)
    torch.testing.assert_close(out, torch.sinh(-x))
    assert "__launch_bounds__(1)" in fd.last_cuda_code()
    prof = fd.profile()
    assert prof.device == "cuda:0" and [k.scheduler for k in prof.kernel_profiles] == ["user"]


def test_profile_of_a_segmented_gpu_run() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.sum(fd.ops.add(a, b), dims=[-1]), dims=[-1]))
    x = torch.randn(2, 5, device="cuda")
    fd.execute([x, x], profile=True)
    prof = fd.profile()
    assert prof.segments == 2 and [k.scheduler for k in prof.kernel_profiles] == ["reduction"] * 2
    assert prof.kernel_time_ms is None and prof.host_time_ms > 0


def test_integer_division_matches_torch_on_cuda() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        fd.add_output(fd.ops.div(a, b))
    x = torch.tensor([7, -7, 5, 0, -3], device="cuda")
    y = torch.tensor([2, 2, 0, 0, 0], device="cuda")
    (out,) = fd.execute([x, y])
    assert torch.equal(out, torch.div(x, y, rounding_mode="trunc"))


def test_user_loop_transforms_run_on_the_gpu() -> None:
    """fd.sched split/merge/parallelize/transform_like: the GPU runs their loop nest
    (12 blocks of 128 threads for 12 x 128 elements), to torch's result."""
    from fuser import ParallelType

    class Scaled(FusionDefinition):
        def definition(self) -> None:
            self.t0 = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            self.t1 = self.ops.mul(self.ops.tanh(self.t0), 5.0)
            self.t2 = self.ops.add(self.t1, 1.0)
            self.add_output(self.t1)
            self.add_output(self.t2)

        def schedule(self) -> None:
            self.sched.merge(self.t2, 0)
            self.sched.split(self.t2, 0, 128)
            self.sched.parallelize(self.t2, 0, ParallelType.grid_x)
            self.sched.parallelize(self.t2, 1, ParallelType.block_x)
            self.sched.transform_like(self.t2)
            self.sched.parallelize_like(self.t2)
            self.sched.inline_most()

    fd = Scaled()
    x = torch.randn(12, 128, device="cuda")
    t1, t2 = fd.execute([x])
    torch.testing.assert_close(t1, torch.tanh(x) * 5)
    torch.testing.assert_close(t2, torch.tanh(x) * 5 + 1)
    assert "__launch_bounds__(128)" in fd.last_cuda_code()
