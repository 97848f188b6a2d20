"""How many segment compiles the written schedule covers, over random fusions.

    PYTHONPATH=. python3 benchmarks/loop_nest_coverage.py 0 500

Runs ``python -m tests.fuzz.triage FIRST LAST --stages cuda`` (every random fusion's
CUDA through the compiler driver) and counts what ``lower_segment`` did with each
segment the runtime lowered: its loop nest, a kind the driver's ``schedule-fusions``
does not write (outer persistent, no-op), a schedule that could not be written
(``fuser.schedule_fallback``) or a written schedule the loop-nest lowering rejected
(``LoweredFusion.fallback``), with the most common reasons. No GPU needed.
"""

from __future__ import annotations

import collections
import sys
from typing import Any


def main() -> None:
    import fuser.codegen.lower as lower
    from fuser.ir.schedule import FALLBACK_ATTR

    first, last = sys.argv[1:3] if len(sys.argv) >= 3 else ("0", "100")
    plain = lower.lower_segment
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()

    def counted(fusion: Any, *args: Any, **kwargs: Any) -> Any:
        low = plain(fusion, *args, **kwargs)
        if kwargs.get("fallback"):
            counts["segments"] += 1
            if FALLBACK_ATTR in fusion.attributes:
                counts["schedule not written (fallback)"] += 1
                reasons[fusion.attributes[FALLBACK_ATTR].data.split(": ", 2)[-1][:100]] += 1
            elif low.fallback:
                counts["loop nest rejected (fallback)"] += 1
                reasons[low.fallback.split(": ", 1)[-1][:100]] += 1
            elif not any(op.dialect_name() == "iterdomain" for op in fusion.body.block.ops):
                counts["kind not written"] += 1
            else:
                counts["loop nest"] += 1
        return low

    lower.lower_segment = counted  # type: ignore[assignment]
    from tests.fuzz import triage

    sys.argv = ["triage", first, last, "--stages", "cuda"]
    try:
        triage.main()
    except SystemExit:
        pass
    print(dict(counts))
    for reason, n in reasons.most_common(12):
        print(f"  {n} {reason}")


if __name__ == "__main__":
    main()
