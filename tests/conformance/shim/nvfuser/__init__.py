"""Test-only ``nvfuser`` module: nvFuser's names mapped onto fuser's, nothing of its own.

It lets nvFuser's frontend suite (``tests/conformance/upstream/``) run unchanged with
``from nvfuser import ...``. Every name is fuser's own object; a name fuser lacks is
added to fuser (``fuser.frontend``), never here.
"""

from fuser.frontend import (
    DataType,
    FusionCache,
    FusionDefinition,
    ParallelType,
    Scalar,
    Tensor,
    Vector,
)
from fuser.frontend.fusion_definition import clone
from fuser.frontend.nvfuser_api import (
    compute_contiguity,
    compute_tensor_descriptor,
    disable_automatic_serialization,
    enable_automatic_serialization,
    version,
)

__all__ = [
    "DataType",
    "FusionCache",
    "FusionDefinition",
    "ParallelType",
    "Scalar",
    "Tensor",
    "Vector",
    "clone",
    "compute_contiguity",
    "compute_tensor_descriptor",
    "disable_automatic_serialization",
    "enable_automatic_serialization",
    "version",
]
