"""The conformance tests that cannot pass yet, by test name, with the reason.

``SKIPS``: tests waiting for another issue's feature (several GPUs: issue 17). ``CPU_SKIPS``: tests skipped in CPU mode only (too slow on the reference
interpreter), which run in GPU mode. ``CPU_XFAILS``: strict xfails in CPU mode only, for
tests whose failure is the CPU mode's own (they are expected to pass in GPU mode). ``XFAILS``: every other failing test, with its cause (README.md groups
them); they are strict xfails, so a test that starts passing is noticed and taken off.
"""

from __future__ import annotations

SKIPS: dict[str, str] = {
    "test_selected_device": "needs several GPUs (issue 17)",
}

CPU_SKIPS: dict[str, str] = {
    "test_uniform_range": "CPU mode: draws 2**29 samples x 101 runs x 4 dtypes (about 2 * 10**11 values), hours on the reference interpreter; its semantics (ranges, edges, means) are tested in tests/test_random_ops.py",
}

CPU_XFAILS: dict[str, str] = {
    "test_from_pytorch_fails_on_cpu_tensor": "CPU mode: from_pytorch accepts CPU tensors (they are the inputs fuser runs on the CPU); the CUDA mode selects nvFuser's device model (fuser.frontend.devices.set_cpu_tensors(False)), which rejects them",
    "test_integer_division": "CPU mode: the test's own eager torch.div(rounding_mode='trunc') raises ZeroDivisionError on CPU tensors; on CUDA tensors fuser divides as CUDA's '/' does, as torch",
}

XFAILS: dict[str, str] = {
    "test_import_conflict_nvfuser_then_direct": "no nvfuser_direct module (nvFuser's newer direct frontend)",
}
