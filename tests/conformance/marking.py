"""The markers ``conftest.py`` puts on the upstream tests, by test name and mode.

``SKIPS`` and ``XFAILS`` (``known.py``) were measured on the CPU. In CPU mode an xfail is
strict, so a test that starts passing fails CI until it is taken off the list. In CUDA
mode (``FUSER_CONFORMANCE_DEVICE=cuda``) the same xfails are not strict: the GPU run
reports the ones that pass there as XPASS instead of failing, and the skips still apply.
``CPU_SKIPS`` are skipped in CPU mode only (too slow on the reference interpreter).
``CPU_XFAILS`` are strict xfails in CPU mode and unmarked in CUDA mode (they must pass).
"""

from __future__ import annotations

import pytest

from tests.conformance.known import CPU_SKIPS, CPU_XFAILS, SKIPS, XFAILS


def markers_for(name: str, device: str) -> list[pytest.MarkDecorator]:
    """The markers of the upstream test ``name`` in ``device``'s mode."""
    if name in SKIPS:
        return [pytest.mark.skip(reason=SKIPS[name])]
    if device == "cpu" and name in CPU_SKIPS:
        return [pytest.mark.skip(reason=CPU_SKIPS[name])]
    if device == "cpu" and name in CPU_XFAILS:
        return [pytest.mark.xfail(reason=CPU_XFAILS[name], strict=True)]
    if name in XFAILS:
        strict = device == "cpu"
        reason = XFAILS[name] if strict else f"measured on the CPU: {XFAILS[name]}"
        return [pytest.mark.xfail(reason=reason, strict=strict)]
    return []
