"""The error of a lowering that cannot turn a fusion (or op) into a kernel.

It lives below the lowering (``codegen/lower``) so that the kernel builders, which
the lowering imports, raise it too: a kernel that declares more static shared memory
than a kernel may (``KernelBuilder.finish``) is a ``LoweringError``, not a ptxas
error at compile time. ``fuser.codegen.lower.common`` re-exports it.
"""

from __future__ import annotations

__all__ = ["LoweringError"]


class LoweringError(ValueError):
    """A fusion (or op) that a lowering cannot turn into a kernel; names the op."""
