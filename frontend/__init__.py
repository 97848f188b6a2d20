"""The Python frontend: nvFuser's ``FusionDefinition`` API building ``fuser`` IR.

Modules: ``datatype`` (``DataType``), ``state`` (records and the values they
define), ``building`` (shared helpers), ``ops`` (``fd.ops``), ``printing`` (Python
text and repro scripts), ``cache`` (``FusionCache``), ``validation`` (execute()
inputs), ``execution`` (runtimes and the replaceable executor), ``mlir``
(``from_mlir``) and ``fusion_definition`` (``FusionDefinition``, legacy ``Fusion``);
``torch_graph`` and ``torch_backend``: ``torch.compile(model, backend="fuser")`` and
``explain`` (torch is imported only when they are used).
"""

from fuser.frontend.cache import FusionCache
from fuser.frontend.datatype import DataType
from fuser.frontend.device_mesh import DeviceMesh
from fuser.frontend.execution import get_executor, set_executor
from fuser.frontend.fusion_definition import Fusion, FusionDefinition
from fuser.frontend.state import Scalar, Tensor, Vector
from fuser.frontend.torch_backend import explain
from fuser.frontend.user_schedule import ParallelType

__all__ = [
    "DataType",
    "DeviceMesh",
    "Fusion",
    "FusionCache",
    "FusionDefinition",
    "ParallelType",
    "Scalar",
    "Tensor",
    "Vector",
    "explain",
    "get_executor",
    "set_executor",
]
