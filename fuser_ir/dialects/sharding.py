"""Device meshes and shardings: the attributes of multi-device fusions (nvFuser's
``DeviceMesh`` and ``DIDx``-parallelized logical axes).

They belong to the ``iterdomain`` dialect (a sharded axis is a logical id bound to
the ``DIDx`` parallel type) but live in this module so that the ``fuser`` dialect,
which ``iterdomain`` imports, can use them in ``fuser.reshard``::

    #iterdomain.mesh<[0, 1, 2, 3]>                 four devices, ranks 0..3
    #iterdomain.sharding<[0, 1], DIDx = 1>          axis 1 split across devices 0, 1
    #iterdomain.sharding<[0, 1]>                    replicated: every device holds it all
    #iterdomain.sharding<[0, 1], partial>           partial sums: the value is the sum
                                                    of what the devices hold

A tensor sharded on axis ``a`` of a mesh of ``d`` devices holds, on the device at
position ``p`` of the mesh, the slice ``[p * n / d, (p + 1) * n / d)`` of that axis
(``n`` divisible by ``d``): its *local* shape has ``n / d`` there. Partial values are
only made by sharding propagation (a reduction or a contraction over a sharded axis)
and are never a fusion's input or output.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from fuser.ir.shapes import DYN, fmt_shape

__all__ = ["DeviceMeshAttr", "ShardingAttr", "ShardingError"]


class ShardingError(ValueError):
    """A sharding that does not fit a tensor (rank, divisibility); names the problem."""


def _parse_devices(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_negative=False, allow_boolean=False)
    )


def _check_devices(devices: Sequence[int], what: str) -> None:
    if not devices:
        raise VerifyException(f"{what}: the mesh has no devices")
    if any(d < 0 for d in devices):
        raise VerifyException(f"{what}: device ids must be non-negative, got {list(devices)}")
    if len(set(devices)) != len(devices):
        raise VerifyException(f"{what}: device ids must be distinct, got {list(devices)}")


@irdl_attr_definition
class DeviceMeshAttr(ParametrizedAttribute):
    """``#iterdomain.mesh<[0, 1, 2, 3]>``: a one-dimensional mesh of device ids (ranks)."""

    name = "iterdomain.mesh"

    devices_attr: ArrayAttr[IntAttr]

    def __init__(self, devices: Sequence[int]) -> None:
        super().__init__(ArrayAttr([IntAttr(d) for d in devices]))

    @property
    def devices(self) -> list[int]:
        return [d.data for d in self.devices_attr.data]

    @property
    def size(self) -> int:
        return len(self.devices_attr.data)

    def position(self, device: int) -> int | None:
        """Where ``device`` is in the mesh (None: not in it)."""
        devices = self.devices
        return devices.index(device) if device in devices else None

    def verify(self) -> None:
        _check_devices(self.devices, "#iterdomain.mesh")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.devices}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            devices = _parse_devices(parser)
        return [ArrayAttr([IntAttr(d) for d in devices])]


@irdl_attr_definition
class ShardingAttr(ParametrizedAttribute):
    """``#iterdomain.sharding<[0, 1], DIDx = 1>`` (axis 1 sharded), ``<[0, 1]>``
    (replicated) or ``<[0, 1], partial>`` (partial sums); see the module docstring."""

    name = "iterdomain.sharding"

    devices_attr: ArrayAttr[IntAttr]
    axis_attr: IntAttr
    """The ``DIDx`` axis, -1 when none; -2: partial sums."""

    def __init__(self, devices: Sequence[int] | DeviceMeshAttr, axis: int | None = None, partial: bool = False) -> None:
        if isinstance(devices, DeviceMeshAttr):
            devices = devices.devices
        code = -2 if partial else (-1 if axis is None else axis)
        super().__init__(ArrayAttr([IntAttr(d) for d in devices]), IntAttr(code))

    @staticmethod
    def replicated(mesh: DeviceMeshAttr) -> ShardingAttr:
        return ShardingAttr(mesh)

    @property
    def mesh(self) -> DeviceMeshAttr:
        return DeviceMeshAttr([d.data for d in self.devices_attr.data])

    @property
    def size(self) -> int:
        return len(self.devices_attr.data)

    @property
    def axis(self) -> int | None:
        """The sharded (``DIDx``) axis; None when replicated or partial."""
        a = self.axis_attr.data
        return a if a >= 0 else None

    @property
    def is_partial(self) -> bool:
        return self.axis_attr.data == -2

    @property
    def is_replicated(self) -> bool:
        return self.axis_attr.data == -1

    def with_axis(self, axis: int | None) -> ShardingAttr:
        return ShardingAttr(self.mesh, axis)

    def describe(self) -> str:
        """``sharded on axis 1 of mesh [0, 1]``, ``replicated on mesh [0, 1]``, ..."""
        mesh = f"mesh {self.mesh.devices}"
        if self.is_partial:
            return f"partial sums on {mesh}"
        if self.axis is None:
            return f"replicated on {mesh}"
        return f"sharded on axis {self.axis} of {mesh}"

    def local_shape(self, shape: Sequence[int]) -> list[int]:
        """The per-device shape of a tensor of global ``shape``; ``ShardingError`` when
        the axis is out of range or its static extent does not divide."""
        out = list(shape)
        a = self.axis
        if a is None:
            return out
        if a >= len(out):
            raise ShardingError(f"axis {a} is out of range for shape {fmt_shape(shape)}")
        if out[a] != DYN:
            if out[a] % self.size:
                raise ShardingError(
                    f"axis {a} of shape {fmt_shape(shape)} has extent {out[a]}, which the "
                    f"{self.size} devices of mesh {self.mesh.devices} do not divide"
                )
            out[a] //= self.size
        return out

    def global_shape(self, local: Sequence[int]) -> list[int]:
        out = list(local)
        a = self.axis
        if a is not None and a < len(out) and out[a] != DYN:
            out[a] *= self.size
        return out

    def verify(self) -> None:
        _check_devices([d.data for d in self.devices_attr.data], "#iterdomain.sharding")
        if self.axis_attr.data < -2:
            raise VerifyException(f"#iterdomain.sharding: axis {self.axis_attr.data} is negative")

    def print_parameters(self, printer: Printer) -> None:
        devices = [d.data for d in self.devices_attr.data]
        extra = ", partial" if self.is_partial else ("" if self.axis is None else f", DIDx = {self.axis}")
        printer.print_string(f"<{devices}{extra}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            devices = _parse_devices(parser)
            code = -1
            if parser.parse_optional_punctuation(",") is not None:
                word = parser.parse_keyword_in(("DIDx", "partial"))
                if word == "partial":
                    code = -2
                else:
                    parser.parse_punctuation("=")
                    code = parser.parse_integer(allow_negative=False, allow_boolean=False)
        return [ArrayAttr([IntAttr(d) for d in devices]), IntAttr(code)]
