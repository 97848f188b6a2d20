#!/usr/bin/env bash
# This tree against another (for example `git archive main | tar -x -C /tmp/main_tree`)
# on one warm GPU machine: benchmarks/host_cases.py three times alternately, then
# benchmarks/run.py --no-compile on each, then the fuser_us/kernel_us pairs.
#
#   bash benchmarks/side_by_side.sh OTHER_TREE [ONLY]     # ONLY: run.py --only (default: all)
#
# Both trees import xdsl from PYTHONPATH (the device's /tmp/site); JSON rows go to
# $OUT/{this,other}.jsonl.
set -u
OTHER=$(cd "$1" && pwd)
ONLY=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/side_by_side}
mkdir -p "$OUT"
export FUSER_CACHE_DIR=${FUSER_CACHE_DIR:-$(mktemp -d /tmp/fuser-kernels.XXXX)}
for _ in 1 2 3; do
  for tree in this other; do
    d=$ROOT; [ $tree = other ] && d=$OTHER
    (cd "$d" && PYTHONPATH=$d:${PYTHONPATH:-} timeout 200 python3 "$ROOT/benchmarks/host_cases.py" $tree 2>&1 | tail -1)
  done
done
for tree in this other; do
  d=$ROOT; [ $tree = other ] && d=$OTHER
  rm -f "$OUT/$tree.jsonl"
  (cd "$d" && PYTHONPATH=$d:${PYTHONPATH:-} timeout 400 python3 benchmarks/run.py --no-compile --only "$ONLY" \
     --json "$OUT/$tree.jsonl" > "$OUT/$tree.bench.log" 2>&1; echo "$tree run.py rc $?")
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
rows = {}
for tree in ("this", "other"):
    try:
        lines = open(f"{out}/{tree}.jsonl").read().splitlines()
    except OSError:
        continue
    for line in lines:
        r = json.loads(line)
        rows.setdefault((r["workload"], r["dtype"]), {})[tree] = r
print("| workload | dtype | other fuser_us | this fuser_us | this/other | other kernel_us | this kernel_us |")
print("|---|---|---|---|---|---|---|")
for (w, d), v in rows.items():
    o, t = v.get("other", {}), v.get("this", {})
    if "fuser_us" in o and "fuser_us" in t:
        print(f"| {w} | {d} | {o['fuser_us']:.1f} | {t['fuser_us']:.1f} | {t['fuser_us'] / o['fuser_us']:.2f} "
              f"| {o.get('kernel_us')} | {t.get('kernel_us')} |")
PY
