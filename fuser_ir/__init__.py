"""The IR layer of fuser (``fuser.ir``): the dialects (``fuser``, ``iterdomain``,
``kernel``, ``hir``), dtypes and shapes, and the reference semantics (the numpy
interpreter ``reference``, ``philox``, ``fp8``, the kernel ``intrinsics``). It imports
no other layer of fuser; the user API is ``fuser.FusionDefinition``."""
