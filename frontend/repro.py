"""nvFuser's repro script (``fd.repro_script_for(inputs)``, ``execute(print_repro=True)``,
``fd.last_repro_script()``) for torch inputs.

Written for code that uses nvFuser's API with torch tensors, the script is nvFuser's
own form (``python/nvfuser/__init__.py``): ``#`` header lines (the versions), ``import
torch``, ``from nvfuser import FusionDefinition, DataType``, the printed definition,
the ``with FusionDefinition() as fd:`` call, the inputs as ``torch.testing.make_tensor``
(contiguous tensors) or ``torch.randn``/``torch.randint(...).as_strided`` (others, with
their sizes and strides) on the tensors' device, scalars as Python literals, and
``fd.execute(inputs)``. It runs wherever ``nvfuser`` is importable: nvFuser itself, or
fuser through its ``nvfuser`` compatibility module (``tests/conformance/shim``). With
numpy inputs, ``printing.repro_script`` writes fuser's own numpy form instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fuser.frontend.validation import is_torch_tensor

__all__ = ["nvfuser_repro_script", "wants_nvfuser_form"]


def wants_nvfuser_form(inputs: Sequence[Any]) -> bool:
    """Whether the inputs are nvFuser's kind (any torch tensor among them)."""
    return any(is_torch_tensor(x) for x in inputs)


def _header() -> str:
    import torch

    from fuser.frontend.nvfuser_api import version

    return (
        f"# fuser version: {version()} (nvFuser's Python API)\n"
        f"# torch version: {torch.__version__}\n"
        f"# cuda version: {torch.version.cuda}\n"
    )


def _tensor(t: Any) -> str:
    """One input tensor as nvFuser writes it."""
    size = tuple(t.size())
    if t.is_contiguous():
        return f"torch.testing.make_tensor({size}, dtype={t.dtype}, device='{t.device}')"
    # the largest linear index + 1: how many elements to generate
    n = 1
    for d, s in zip(t.size(), t.stride(), strict=True):
        if d == 0:
            n = 0
            break
        n += (d - 1) * s
    strided = f".as_strided({size}, {tuple(t.stride())})"
    if t.dtype.is_floating_point:
        return f"torch.randn({n}, dtype={t.dtype}, device='{t.device}'){strided}"
    upper = 2 if str(t.dtype) == "torch.bool" else 10
    return f"torch.randint(0, {upper}, ({n},), dtype={t.dtype}, device='{t.device}'){strided}"


def _scalar(x: Any) -> str:
    """A scalar (or list) as a Python literal; ``inf``/``nan`` as ``float(...)``."""
    text = str(x)
    text = re.sub(r"\binf\b", 'float("inf")', text)
    return re.sub(r"\bnan\b", 'float("nan")', text)


def nvfuser_repro_script(printed: str, fn_name: str, inputs: Sequence[Any] | None) -> str:
    """The script for the definition whose ``repr`` is ``printed`` (``"\\ndef ...\\n\\n"``),
    named ``fn_name``, run with ``inputs`` (no input list when None)."""
    msg = (
        _header()
        + "import torch\n"
        + "from nvfuser import FusionDefinition, DataType\n"
        + printed
        + "with FusionDefinition() as fd:\n"
        + f"    {fn_name}(fd)\n"
    )
    if inputs is not None:
        msg += "\ninputs = [\n"
        for x in inputs:
            msg += f"    {_tensor(x) if is_torch_tensor(x) else _scalar(x)},\n"
        msg += "]\nfd.execute(inputs)\n"
    return msg
