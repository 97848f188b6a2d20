"""``nvfuser.nvfuser_version``: fuser's ``Version`` and ``NvfuserVersion``."""

from fuser.frontend.nvfuser_api import NvfuserVersion, Version

__all__ = ["NvfuserVersion", "Version"]
