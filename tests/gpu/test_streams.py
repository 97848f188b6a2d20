"""Stream loops on a real GPU (``pytest -m gpu``): seed 001's lowered programs give
the reference results for 1, 2, 4 and 8 streams, and per-slice kernels on different
streams overlap in time (CUDA event timeline).

Until ``fuser.runtime.compile_fusion.launch_fusion`` lands, launches go to a launcher
written here: a hand-written CUDA copy kernel (the one-op fusions of these programs
are ``fuser.set``) compiled by NVRTC and launched through ``fuser.runtime.cuda_driver``,
which can also spin for a given number of clock cycles to make each slice's kernel
long enough (~100 us) for the timeline check.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fuser.codegen.kernel_cache import compile_cached
from fuser.ir.context import parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.reference import run_fusion
from fuser.passes.lower_stream_loops import lower_stream_loops
from fuser.runtime import cuda_driver as drv
from fuser.runtime.gpu_arrays import DeviceArray, contiguous_strides
from fuser.runtime.gpu_evaluator import GpuEvaluator

pytestmark = pytest.mark.gpu

CASES = Path(__file__).parent.parent / "filecheck" / "passes"

COPY_SPIN = """\
extern "C" __global__ void copy_spin(const float* x, float* y, long long n, long long spin) {
  long long start = clock64();
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    y[i] = x[i];
  }
  while (clock64() - start < spin) {
  }
}
"""


class CopyLauncher:
    """``launcher(fusion, args, outs, stream)`` for one-op ``fuser.set`` fusions on
    contiguous float32 arrays; records (stream, start event, end event) per launch."""

    def __init__(self, spin_cycles: int = 0, blocks: int = 1) -> None:
        compiled = compile_cached(COPY_SPIN, name="copy_spin")
        self.kernel = drv.load_module(compiled.image).kernel("copy_spin", "ppqq")
        self.spin = spin_cycles
        self.blocks = blocks
        self.timeline: list[tuple[int, drv.Event, drv.Event]] = []

    def __call__(self, fusion: F.FusionOp, args: list[Any], outs: list[Any] | None,
                 stream: int) -> Sequence[Any]:
        ops = [op for op in fusion.body.block.ops if not isinstance(op, F.OutputOp)]
        assert [op.name for op in ops] == ["fuser.set"], [op.name for op in ops]
        (x,) = args
        assert x.strides_elements == contiguous_strides(x.shape)
        y = outs[0] if outs is not None else DeviceArray(x.shape, x.dtype)
        assert y.strides_elements == contiguous_strides(y.shape)
        start = drv.Event().record(stream)
        self.kernel.launch(self.blocks, 256, (x.ptr, y.ptr, x.size, self.spin), stream=stream)
        end = drv.Event().record(stream)
        self.timeline.append((stream, start, end))
        return [y]


def _lowered(file: str, num_streams: int, join_after_loop: bool = False) -> Any:
    text = "\n".join(
        ln for ln in (CASES / file).read_text().splitlines() if not ln.lstrip().startswith("//")
    )
    m = parse_module(text)
    reference = next(op for op in parse_module(text).ops if isinstance(op, F.FusionOp))
    lower_stream_loops(m, num_streams, join_after_loop)
    m.verify()
    return m, reference


@pytest.mark.parametrize("join_after_loop", [False, True])
@pytest.mark.parametrize("num_streams", [1, 2, 4, 8])
@pytest.mark.parametrize(
    "file",
    ["lower-stream-loops-single.mlir", "lower-stream-loops-two.mlir",
     "lower-stream-loops-three.mlir"],
)
def test_seed_cases_match_reference(file: str, num_streams: int, join_after_loop: bool) -> None:
    m, reference = _lowered(file, num_streams, join_after_loop)
    x = np.random.default_rng(num_streams).standard_normal((16, 1000)).astype(np.float32)
    launcher = CopyLauncher()
    ev = GpuEvaluator(m, launcher, num_streams)
    (out,) = ev.run([DeviceArray.from_numpy(x)])
    (ref,) = run_fusion(reference, [x])
    np.testing.assert_array_equal(out.to_numpy(), ref)
    workers = {s for s, _, _ in launcher.timeline} - {drv.current_stream()}
    assert len(workers) == num_streams


def test_preallocated_output_on_gpu_is_written_in_place() -> None:
    m, _ = _lowered("lower-stream-loops-two.mlir", 4)
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    buf = DeviceArray((8, 4), DType.float32)
    (out,) = GpuEvaluator(m, CopyLauncher(), 4).run(
        [DeviceArray.from_numpy(x)], preallocated_outputs=[buf]
    )
    assert out is buf
    np.testing.assert_array_equal(buf.to_numpy(), x)


def _intervals(launcher: CopyLauncher, origin: drv.Event) -> list[tuple[int, float, float]]:
    return [(s, origin.elapsed_ms(a), origin.elapsed_ms(b)) for s, a, b in launcher.timeline]


def test_streams_overlap_on_the_timeline() -> None:
    """8 slices of ~1 ms each: with the join after the loop, on 4 streams the kernels
    of different streams run at the same time and the whole loop takes well under the
    serial time. Seed 001's in-loop join serializes the iterations (the user's stream
    waits for worker i before worker i + 1 waits for it): no overlap, as measured."""
    spin = int(drv.properties().clock_rate_khz * 1.0)  # cycles in ~1 ms: GPU-bound, not host-bound
    rows, cols = 8, 1 << 14
    x = DeviceArray.from_numpy(np.ones((rows, cols), np.float32))
    totals: dict[tuple[int, bool], float] = {}
    overlaps: dict[tuple[int, bool], int] = {}
    for n, join_after in ((1, True), (4, False), (4, True)):
        m, _ = _lowered("lower-stream-loops-single.mlir", n, join_after)
        launcher = CopyLauncher(spin_cycles=spin)
        ev = GpuEvaluator(m, launcher, n)
        ev.run([x])  # warm up (module load, stream creation)
        ev.synchronize()
        launcher.timeline.clear()
        origin = drv.Event().record(drv.current_stream())
        (out,) = ev.run([x])
        done = drv.Event().record(drv.current_stream())
        done.synchronize()
        ev.synchronize()
        spans = _intervals(launcher, origin)
        totals[n, join_after] = origin.elapsed_ms(done)
        overlaps[n, join_after] = sum(
            1
            for i, (s1, a1, b1) in enumerate(spans)
            for s2, a2, b2 in spans[i + 1:]
            if s1 != s2 and a1 < b2 and a2 < b1
        )
        np.testing.assert_array_equal(out.to_numpy(), np.ones((rows, cols), np.float32))
        print(f"{n} stream(s), join after loop {join_after}: {totals[n, join_after] * 1000:.0f} us for {rows} slices, "
              f"{overlaps[n, join_after]} overlapping pairs of launches on different streams")
    assert overlaps[1, True] == 0
    assert overlaps[4, False] == 0  # seed 001's in-loop join
    assert overlaps[4, True] >= 4
    assert totals[4, True] < 0.6 * totals[1, True]
