"""Scheduler selection: which kind of kernel (pointwise, reduction, persistent,
transpose...) runs a fusion, and with which parameters, for a target GPU.

``registry.select`` tries the schedulers in priority order; ``plan.make_plan`` is
the frontend's view; ``passes/select_schedulers.py`` annotates IR."""
