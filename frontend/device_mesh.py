"""nvFuser's ``DeviceMesh`` for the frontend (``fuser.DeviceMesh``): the devices a
multi-device fusion runs on (``fuser.frontend.multidevice``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["DeviceMesh"]


class DeviceMesh:
    """nvFuser's ``DeviceMesh``: a one-dimensional list of device ids (ranks)."""

    def __init__(self, devices: Iterable[Any]) -> None:
        if hasattr(devices, "tolist"):
            devices = devices.tolist()
        self.devices = [int(d) for d in devices]
        if not self.devices or len(set(self.devices)) != len(self.devices) or min(self.devices) < 0:
            raise ValueError(f"DeviceMesh: devices must be distinct non-negative ids, got {self.devices}")

    @property
    def size(self) -> int:
        return len(self.devices)

    def __repr__(self) -> str:
        return f"DeviceMesh({self.devices})"
