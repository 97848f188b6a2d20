"""The GPU host-program evaluator (``pytest -m gpu``): host views are strided views of
device memory (no copies), writes through views and aliases land in the target
buffer, deallocated buffers cannot be read, torch tensors in give torch tensors out."""

from __future__ import annotations

import numpy as np
import pytest

from fuser.ir.context import parse_module
from fuser.runtime.gpu_arrays import DeviceArray
from fuser.runtime.gpu_evaluator import GpuEvaluator
from fuser.runtime.host_evaluator import HostEvaluator, HostIrError
from tests.gpu.test_streams import CopyLauncher

pytestmark = pytest.mark.gpu

VIEWS = """
fuser.fusion @set(%x : !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
  %y = fuser.set %x : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %y : !fuser.tensor<?xf32>
}
hir.program @main(%a : !fuser.tensor<4x6xf32>) -> (!fuser.tensor<6x4xf32>, !fuser.tensor<8xf32>) {
  %buf = hir.allocate {zero_init, preallocated} : !fuser.tensor<6x4xf32>
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %row = hir.alias_select %a[axis = 0, %c1] : !fuser.tensor<4x6xf32>, i64 -> !fuser.tensor<6xf32>
  %col = hir.alias_select %buf[axis = 1, %c2] : !fuser.tensor<6x4xf32>, i64 -> !fuser.tensor<6xf32>
  %w = hir.permute %buf {dims = array<i64: 1, 0>} : !fuser.tensor<6x4xf32> -> !fuser.tensor<4x6xf32>
  %flat = hir.reshape %a {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
  %part = hir.slice %flat {starts = array<i64: 8>, ends = array<i64: 16>, strides = array<i64: 1>} : !fuser.tensor<24xf32> -> !fuser.tensor<8xf32>
  %dst = hir.allocate {preallocated} : !fuser.tensor<8xf32>
  %r0 = hir.launch @set(%part) outs(%dst : !fuser.tensor<8xf32>) : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  %tmp = hir.allocate : !fuser.tensor<6xf32>
  hir.alias %tmp, %row : !fuser.tensor<6xf32>, !fuser.tensor<6xf32>
  %r1 = hir.launch @set(%tmp) outs(%tmp : !fuser.tensor<6xf32>) : (!fuser.tensor<6xf32>) -> !fuser.tensor<6xf32>
  hir.return %buf, %dst : !fuser.tensor<6x4xf32>, !fuser.tensor<8xf32>
}
"""


def test_views_without_copies_match_cpu() -> None:
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    m = parse_module(VIEWS)
    m.verify()
    cpu = HostEvaluator(m).run([a.copy()])
    da = DeviceArray.from_numpy(a)
    buf, part = GpuEvaluator(m, CopyLauncher()).run([da])
    np.testing.assert_array_equal(buf.to_numpy(), cpu[0])
    np.testing.assert_array_equal(part.to_numpy(), cpu[1])
    np.testing.assert_array_equal(part.to_numpy(), a.reshape(-1)[8:16])


def test_strided_views_share_the_buffer() -> None:
    """alias_select of a column is a strided view: the copy kernel needs contiguous
    arrays, so launching on it is refused by the launcher (no silent copy)."""
    text = VIEWS.replace("%r1 = hir.launch @set(%tmp)", "%r1 = hir.launch @set(%col)").replace(
        "outs(%tmp : !fuser.tensor<6xf32>) : (!fuser.tensor<6xf32>)",
        "outs(%tmp : !fuser.tensor<6xf32>) : (!fuser.tensor<6xf32>)",
    )
    m = parse_module(text)
    with pytest.raises(AssertionError):
        GpuEvaluator(m, CopyLauncher()).run([DeviceArray.from_numpy(np.ones((4, 6), np.float32))])


def test_deallocated_buffer_cannot_be_read() -> None:
    text = """
    fuser.fusion @set(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
      %y = fuser.set %x : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
      fuser.output %y : !fuser.tensor<4xf32>
    }
    hir.program @main(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
      %t = hir.allocate : !fuser.tensor<4xf32>
      %r = hir.launch @set(%a) outs(%t : !fuser.tensor<4xf32>) : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
      hir.deallocate %t : !fuser.tensor<4xf32>
      %s = hir.launch @set(%t) : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
      hir.return %s : !fuser.tensor<4xf32>
    }
    """
    m = parse_module(text)
    with pytest.raises(HostIrError, match="read after hir.deallocate"):
        GpuEvaluator(m, CopyLauncher()).run([DeviceArray.from_numpy(np.ones(4, np.float32))])


def test_torch_tensors_in_give_torch_tensors_out() -> None:
    torch = pytest.importorskip("torch")
    a = torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6)

    class TorchCopy:
        def __call__(self, fusion, args, outs, stream):  # noqa: ANN001, ANN204
            with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
                if outs is None:
                    return [args[0].clone()]
                outs[0].copy_(args[0])
                return outs

    m = parse_module(VIEWS)
    buf, part = GpuEvaluator(m, TorchCopy()).run([a])
    torch.cuda.synchronize()
    assert isinstance(buf, torch.Tensor) and buf.is_cuda
    cpu = HostEvaluator(m).run([a.cpu().numpy().copy()])
    np.testing.assert_array_equal(buf.cpu().numpy(), cpu[0])
    np.testing.assert_array_equal(part.cpu().numpy(), cpu[1])
