"""numpy <-> torch conversions that keep fuser's dtypes: bfloat16 through an int16
view, the float8 types through a uint8 view (numpy has neither; ``ml_dtypes`` does)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np


def torch_to_numpy(t: Any) -> np.ndarray:
    """A numpy view of a CPU torch tensor (bfloat16 through an int16 view)."""
    import torch

    if t.device.type != "cpu":
        raise ValueError(f"only CPU tensors can be executed on the CPU, got a tensor on {t.device}")
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    fp8 = _FP8_TORCH_NUMPY.get(str(t.dtype))
    if fp8 is not None:  # float8: through a uint8 view
        return t.view(torch.uint8).numpy().view(fp8)
    return t.numpy()


#: torch's float8 dtypes (by name) and their ml_dtypes types.
_FP8_TORCH_NUMPY = {
    "torch.float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "torch.float8_e5m2": ml_dtypes.float8_e5m2,
}


def numpy_to_torch(a: Any) -> Any:
    import torch

    if not isinstance(a, np.ndarray):
        return torch.tensor(a)
    if not a.flags.writeable:
        a = a.copy()
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    for name, fp8 in _FP8_TORCH_NUMPY.items():
        if a.dtype == fp8:
            return torch.from_numpy(a.view(np.uint8)).view(getattr(torch, name.removeprefix("torch.")))
    return torch.from_numpy(a)
