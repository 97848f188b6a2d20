"""How many segment compiles the written schedule covers, over random fusions.

    PYTHONPATH=. python3 benchmarks/loop_nest_coverage.py 0 500

Runs ``python -m tests.fuzz.triage FIRST LAST --stages cuda`` (every random fusion's
CUDA through the compiler driver) and counts what ``lower_segment`` did with each
segment the runtime lowered: its loop nest, a kind the driver's ``schedule-fusions``
did not write (with the seeds), a schedule that could not be written
(``fuser.schedule_fallback``) or a written schedule the loop-nest lowering rejected
(``LoweredFusion.fallback``), with the most common reasons and their seeds (``python -m
tests.fuzz.triage SEED SEED+1 -v --stages cuda`` shows one). No GPU needed.
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
    seeds: dict[str, set[int]] = collections.defaultdict(set)
    unwritten: dict[str, set[int]] = collections.defaultdict(set)
    current = [-1]

    def counted(fusion: Any, *args: Any, **kwargs: Any) -> Any:
        low = plain(fusion, *args, **kwargs)
        if kwargs.get("fallback"):
            counts["segments"] += 1
            if FALLBACK_ATTR in fusion.attributes:
                counts["schedule not written (fallback)"] += 1
                why = fusion.attributes[FALLBACK_ATTR].data.split(": ", 2)[-1][:100]
                reasons[why] += 1
                seeds[why].add(current[0])
            elif low.fallback:
                counts["loop nest rejected (fallback)"] += 1
                why = low.fallback.split(": ", 1)[-1][:100]
                reasons[why] += 1
                seeds[why].add(current[0])
            elif not any(op.dialect_name() == "iterdomain" for op in fusion.body.block.ops):
                counts["kind not written"] += 1
                counts[f"kind not written: {low.scheduler}"] += 1
                unwritten[low.scheduler].add(current[0])
            else:
                counts["loop nest"] += 1
        return low

    lower.lower_segment = counted  # type: ignore[assignment]
    from tests.fuzz import triage

    plain_case = triage.random_case

    def case(seed: int, *args: Any, **kwargs: Any) -> Any:
        current[0] = seed
        return plain_case(seed, *args, **kwargs)

    triage.random_case = case  # type: ignore[assignment]

    sys.argv = ["triage", first, last, "--stages", "cuda"]
    try:
        triage.main()
    except SystemExit:
        pass
    print(dict(counts))
    for reason, n in reasons.most_common(12):
        print(f"  {n} {reason} (seeds {sorted(seeds[reason])})")
    for kind, where in sorted(unwritten.items()):
        print(f"  {kind} not written (seeds {sorted(where)})")


if __name__ == "__main__":
    main()
