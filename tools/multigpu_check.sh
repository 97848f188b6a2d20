#!/usr/bin/env bash
# The multi-GPU check in one call on the device machine (issue 17; kind nvidia-h200-x2,
# with `.whl` carried):
#
#   bash tools/multigpu_check.sh      # logs in $OUT: env.txt, multigpu_tests.log,
#                                     # multigpu.log, multigpu.jsonl, summary.txt
#
# 1. installs the carried wheels into /tmp/site and makes the repository importable;
# 2. runs the GPU tests of tests/multidevice (every hir communication over NCCL on 2
#    and 4 GPUs when there are, the fusions on 2 GPUs against one GPU);
# 3. runs benchmarks/multigpu.py under torchrun on 2 GPUs (correctness against one
#    GPU, and the overlapped allgather + GEMM against gather-then-multiply).
# BENCH_ARGS adds arguments to the benchmark (e.g. --quick). Exit status: 0 when both
# stages passed.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/multigpu_out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
    >/dev/null 2>&1 || { echo "wheel install failed"; exit 2; }
fi
export PYTHONPATH="$PWD:/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
export FUSER_CACHE_DIR=${FUSER_CACHE_DIR:-$(mktemp -d /tmp/fuser-kernels.XXXX)}
export PYTHONUNBUFFERED=1
{ nvidia-smi -L; nvidia-smi topo -m; "$PY" -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"; } \
  > "$OUT/env.txt" 2>&1
start=$(date +%s)
timeout "${MULTIGPU_TESTS_TIMEOUT:-400}" "$PY" -m pytest -q -o addopts="" -p no:cacheprovider -m gpu \
  tests/multidevice > "$OUT/multigpu_tests.log" 2>&1
tests_rc=$?
echo "tests: rc=$tests_rc $(( $(date +%s) - start ))s $(tail -1 "$OUT/multigpu_tests.log")" > "$OUT/summary.txt"
start=$(date +%s)
# shellcheck disable=SC2086
timeout "${MULTIGPU_BENCH_TIMEOUT:-500}" "$PY" -m torch.distributed.run --nproc-per-node 2 \
  benchmarks/multigpu.py --json "$OUT/multigpu.jsonl" ${BENCH_ARGS:-} > "$OUT/multigpu.log" 2>&1
bench_rc=$?
echo "bench: rc=$bench_rc $(( $(date +%s) - start ))s" >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
[ "$tests_rc" = 0 ] && [ "$bench_rc" = 0 ]
