"""nvFuser's kernel strings (``fuser.frontend.kernel_strings``): ``fd.last_cuda_code``,
``fd.cuda_code_for``, ``fd.last_scheduled_fusion_ir``, ``fd.scheduled_fusion_ir_for`` answer
for the input layouts a fusion ran with and raise nvFuser's errors otherwise;
``fd.generate_cuda_code`` answers for any inputs. tests/gpu/test_gpu_last_cuda_code.py
checks the code of GPU runs."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition


def _double() -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(x, 2.0))
    return fd


def test_before_any_run_it_says_the_fusion_never_ran() -> None:
    fd = _double()
    for ask in (fd.last_cuda_code, fd.last_scheduled_fusion_ir):
        with pytest.raises(RuntimeError, match=r"never been executed.*generate_cuda_code"):
            ask()
    with pytest.raises(RuntimeError, match="never been executed"):
        fd.cuda_code_for([np.arange(4, dtype=np.float32)])


def test_an_undefined_subclass_is_an_invalid_definition() -> None:
    class Later(FusionDefinition):
        def definition(self) -> None:
            x = self.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
            self.add_output(self.ops.neg(x))

    fd = Later()
    with pytest.raises(RuntimeError, match="Invalid fusion definition!"):
        fd.last_cuda_code()
    with pytest.raises(RuntimeError, match="Invalid fusion definition!"):
        fd.sched.user_schedule_ir()
    assert fd.id() is None  # asking did not define it


def test_after_a_cpu_run_the_code_is_the_one_generated_for_its_layouts() -> None:
    fd = _double()
    x = np.arange(4, dtype=np.float32)
    fd.execute([x])
    code = fd.last_cuda_code()
    assert "__global__" in code and not code.startswith("//")  # the kernel, no preamble
    full = fd.last_cuda_code(intrinsic_code=True)
    assert len(full) > len(code) and full.endswith(code)
    assert fd.cuda_code_for([x]) == code
    assert fd.cuda_code_for([x], intrinsic_code=True) == full == fd.generate_cuda_code([x])
    ir = fd.last_scheduled_fusion_ir()
    assert "fuser.schedule" in ir and "iterdomain.loop" not in ir
    assert "iterdomain.loop" in fd.last_scheduled_fusion_ir(tensor_transforms=True)
    assert fd.scheduled_fusion_ir_for(
        [x], tensor_transforms=True
    ) == fd.generate_scheduled_fusion_ir([x])


def test_other_layouts_are_not_compiled() -> None:
    fd = _double()
    fd.execute([np.arange(4, dtype=np.float32)])
    bigger = np.arange(64, dtype=np.float32)
    for ask in (fd.cuda_code_for, fd.scheduled_fusion_ir_for):
        with pytest.raises(RuntimeError, match="not compiled"):
            ask([bigger])
    assert "__global__" in fd.generate_cuda_code([bigger])  # any inputs, no run needed
    fd.execute([bigger])
    assert "extent_n0" in fd.cuda_code_for([bigger])  # the length is a kernel parameter


def test_a_segmented_fusion_shows_every_segment() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(t, dims=[0]))
        fd.add_output(fd.ops.sum(t, dims=[1]))
    x = np.ones((2, 3), np.float32)
    fd.execute([x])
    code = fd.last_cuda_code()
    assert code.count("// segment") == 2 and code.count("__global__") >= 2
    assert fd.scheduled_fusion_ir_for([x]).count("// segment") == 2


def test_a_view_only_run_launched_no_kernel() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.permute(x, [1, 0]))
    fd.execute([np.ones((8, 4), np.float32)])
    with pytest.raises(RuntimeError, match="launched no kernel"):
        fd.last_cuda_code()


def test_what_ran_last_is_per_fusion() -> None:
    # The kernel cache is process-wide; what a fusion last ran is its own (a
    # definition identical to one that ran is the same cached fusion, as in nvFuser).
    with FusionDefinition() as other:
        x = other.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        other.add_output(other.ops.mul(x, 3.25))
    _double().execute([np.arange(4, dtype=np.float32)])
    with pytest.raises(RuntimeError, match="never been executed"):
        other.last_cuda_code()
