#!/usr/bin/env bash
# Every GPU test (`pytest -m gpu tests`, the frontend tests on CUDA tensors and nvFuser's
# conformance suite in CUDA mode) under compute-sanitizer, sharded so that the
# whole suite fits in one device call. Called by tools/gpu_check.sh (stage
# "sanitizers"); it can also run alone once the environment is set up:
#
#   bash tools/sanitize.sh OUTDIR [TOOL...]        # TOOL: memcheck racecheck (default both)
#
# The GPU tests' node ids are collected once (`pytest --collect-only`), without
# the two kinds of test that cannot be judged here and launch no kernel of their own:
# host-overhead timings ("overhead" in the name; a sanitizer slows the host) and the
# device-wide free-memory check ("memory_is_freed"; the other shards allocate at the
# same time). The ids are dealt round-robin into SANITIZE_SHARDS shards (default 6) and every
# (tool, shard) pair runs as its own process, all at once: the device machine has 16
# cores and the GPU runs the processes' kernels side by side. Tools:
#   memcheck:  --tool memcheck --report-api-errors no (cuda-python probes driver entry
#              points that a driver may lack; those failed calls are not kernel errors)
#   racecheck: --tool racecheck --racecheck-report all
# both with --error-exitcode 1. Logs: OUTDIR/<tool>.<shard>.log; OUTDIR/sanitize.txt
# has one line per (tool, shard): exit status, pytest's counts line and the sanitizer's
# summary. Exit status 0 when every shard exited 0 and ran at least one test.
set -u
OUTDIR=${1:?usage: tools/sanitize.sh OUTDIR [memcheck] [racecheck]}
shift
TOOLS=("$@")
[ ${#TOOLS[@]} -eq 0 ] && TOOLS=(memcheck racecheck)
cd "$(dirname "$0")/.."
mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
SHARDS=${SANITIZE_SHARDS:-6}
DESELECT="not overhead and not memory_is_freed"
SANITIZER=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)}
if [ -z "$SANITIZER" ] || [ ! -x "$SANITIZER" ]; then
  echo "compute-sanitizer not found (set COMPUTE_SANITIZER)" | tee "$OUTDIR/sanitize.txt"
  exit 2
fi

ids="$OUTDIR/gpu_test_ids.txt"
collect() {  # collect PYTEST-ARGS...: the node ids, one per line
  "$PY" -m pytest -k "$DESELECT" --collect-only -o addopts="" -q -p no:cacheprovider "$@" \
    2>>"$OUTDIR/collect.err" | grep "::"
}
: >"$OUTDIR/collect.err"
# The GPU paths of the suite: every `-m gpu` test, and (SANITIZE_GPU_MODES=1, the
# default) the suites that also run on the GPU through an environment switch: the
# frontend tests on torch CUDA tensors and nvFuser's conformance suite in CUDA mode.
export FUSER_TEST_DEVICE=cuda FUSER_CONFORMANCE_DEVICE=cuda
{
  collect -m gpu tests
  if [ "${SANITIZE_GPU_MODES:-1}" = 1 ]; then
    collect tests/frontend
    collect tests/conformance/test_conformance.py
  fi
} | sort -u >"$ids"
total=$(wc -l <"$ids")
if [ "$total" -eq 0 ]; then
  { echo "no GPU tests collected"; cat "$OUTDIR/collect.err"; } | tee "$OUTDIR/sanitize.txt"
  exit 2
fi
for ((s = 0; s < SHARDS; s++)); do
  awk -v n="$SHARDS" -v s="$s" '(NR - 1) % n == s' "$ids" >"$OUTDIR/shard.$s.txt"
done

declare -A pids
for tool in "${TOOLS[@]}"; do
  case $tool in
    memcheck) flags=(--tool memcheck --report-api-errors no) ;;
    racecheck) flags=(--tool racecheck --racecheck-report all) ;;
    *) echo "unknown sanitizer tool: $tool (memcheck, racecheck)"; exit 2 ;;
  esac
  for ((s = 0; s < SHARDS; s++)); do
    [ -s "$OUTDIR/shard.$s.txt" ] || continue
    mapfile -t shard_ids <"$OUTDIR/shard.$s.txt"
    "$SANITIZER" "${flags[@]}" --error-exitcode 1 \
      "$PY" -m pytest -rs -p no:cacheprovider "${shard_ids[@]}" \
      >"$OUTDIR/$tool.$s.log" 2>&1 &
    pids["$tool.$s"]=$!
  done
done

status=0
summary="$OUTDIR/sanitize.txt"
echo "$total tests in $SHARDS shards; tools: ${TOOLS[*]}" >"$summary"
for key in $(printf '%s\n' "${!pids[@]}" | sort); do
  wait "${pids[$key]}"
  rc=$?
  log="$OUTDIR/$key.log"
  counts=$(grep -E "(passed|failed|errors?|skipped).* in [0-9.]+s" "$log" | tail -n 1)
  san=$(grep -Eo "(ERROR|RACECHECK) SUMMARY: .*" "$log" | tail -n 2 | tr '\n' ' ')
  # a shard that ran no test did not check anything
  case $counts in *passed*) ;; *) [ "$rc" -eq 0 ] && rc=1 ;; esac
  echo "$key: rc=$rc $counts | ${san% }" >>"$summary"
  [ "$rc" -eq 0 ] || status=1
done
cat "$summary"
exit $status
