"""``nvfuser.pytorch_utils``: fuser's ``torch_dtype_to_nvfuser_dtype``."""

from fuser.frontend.nvfuser_api import torch_dtype_to_nvfuser_dtype

__all__ = ["torch_dtype_to_nvfuser_dtype"]
