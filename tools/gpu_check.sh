#!/usr/bin/env bash
# The whole GPU check in one call on the device machine (see /work/.library/device):
#
#   bash tools/gpu_check.sh            # with `.whl` carried; logs go to $OUT
#
# 1. installs the carried wheels (.whl/*.whl: xdsl and its deps, filecheck, lit, ...)
#    into /tmp/site, and makes the repository importable (PYTHONPATH), with its console
#    scripts (fuser-opt, ...) as shims in /tmp/site/bin and its entry points registered;
# 2. runs `pytest -m gpu` (verbose, with prints: device properties, launch overhead);
# 3. runs every frontend test on the GPU (FUSER_TEST_DEVICE=cuda: torch CUDA inputs,
#    generated kernels), then the full test suite;
# 4. runs nvFuser's conformance suite (tests/conformance) on the GPU
#    (FUSER_CONFORMANCE_DEVICE=cuda: upstream unrewritten, torch CUDA tensors, fuser's GPU
#    path; the CPU-measured xfails are not strict, so -rxX lists which pass there);
#    then random fusions on the GPU (tests/fuzz/triage.py --cuda: seeds
#    GPU_CHECK_FUZZ_SEEDS, default "0 2000", in GPU_CHECK_FUZZ_WORKERS processes, default
#    14; each through fd.execute, its segments, and its small case after it);
# 5. runs one training step of GPT-2 small and a Llama block through
#    torch.compile(backend="fuser") against eager and inductor
#    (benchmarks/transformer_step.py; transformers from .whl/tf), a step of 24 tiny
#    model families on CUDA against eager (benchmarks/model_families.py), the matmul
#    segments against the plain GEMM (benchmarks/matmul.py), an Adam step written in
#    place against torch's fused Adam, eager, inductor and a copy
#    (benchmarks/adam_step.py), then benchmarks/run.py when it exists;
# 6. (not by default) runs every GPU test (`pytest -m gpu tests`, the frontend tests on
#    CUDA tensors, the conformance suite in CUDA mode) under compute-sanitizer
#    (tools/sanitize.sh): memcheck (--report-api-errors no) and racecheck
#    (--racecheck-report all), sharded and run side by side so the suite fits in one
#    call; reports in torch's kernels are told apart from fuser's (tools/sanitizer_log.py):
#
#   GPU_CHECK_STAGES=sanitizers bash tools/gpu_check.sh   # both tools ("memcheck" or
#   GPU_CHECK_STAGES=all bash tools/gpu_check.sh          #  "racecheck" alone: one tool)
#
#    The whole suite no longer fits one call under both tools; what fitted in 398 s on
#    the H200 (2026-11-29): SANITIZE_GPU_MODES=0 SANITIZE_SHARDS=8
#    SANITIZE_DESELECT=random_fusions GPU_CHECK_STAGES=sanitizers bash tools/gpu_check.sh
#
#    COMPUTE_SANITIZER names the binary (default: PATH, then /usr/local/cuda*/bin).
# GPU_CHECK_STAGES picks stages (default "gpu-tests frontend-on-gpu full-tests
# conformance-on-gpu fuzz-on-gpu transformers model-families matmul adam benchmarks"; "all" adds
# sanitizers). Each stage has a time limit (GPU_CHECK_*_TIMEOUT seconds: GPU, FRONTEND, FULL,
# CONFORMANCE, FUZZ, SANITIZERS, MEMCHECK, RACECHECK, TRANSFORMERS, FAMILIES, MATMUL, ADAM, BENCH); logs:
# $OUT/{env.txt, gpu_tests.log, frontend_gpu.log, full_tests.log, conformance_gpu.log, fuzz_gpu.log,
# sanitizers.log, transformers.log, families.log, matmul.log, adam.log,
# sanitize/<tool>.<shard>.log, bench.log, summary.txt}; the summary has each stage's pytest counts line (passed,
# failed, xfailed, xpassed, ...) and, for the sanitizers, their "ERROR SUMMARY: N errors"
# (racecheck also its "RACECHECK SUMMARY"). Exit status: 0 when every stage that ran passed.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
SITE=/tmp/site
export PYTHONUNBUFFERED=1

if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" .whl/*.whl || { echo "wheel install failed"; exit 2; }
fi
# Hugging Face transformers and its dependencies (.whl/tf, numpy and typing-extensions
# left out: the machine's own) for the torch.compile backend's model tests. The device
# runs Python 3.12: binary wheels must be cp312 builds, downloaded with
#   pip download -d .whl/tf --no-deps --python-version 3.12 --only-binary=:all: \
#     --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 <pkg==version ...>
# (a plain `pip download` on a 3.11 machine fetches cp311 ones, and this install fails).
if compgen -G ".whl/tf/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" .whl/tf/*.whl || { echo "transformers wheel install failed"; exit 2; }
fi
mkdir -p "$SITE/bin"
export PYTHONPATH="$PWD:$SITE${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$SITE/bin:$PATH"
export FUSER_CACHE_DIR=${FUSER_CACHE_DIR:-$(mktemp -d /tmp/fuser-kernels.XXXX)}

# Console scripts and entry points of pyproject.toml, without a build step.
"$PY" - "$SITE" "$PY" <<'PYEOF'
import os, sys, tomllib
site, py = sys.argv[1], sys.argv[2]
proj = tomllib.load(open("pyproject.toml", "rb"))["project"]
for name, target in proj.get("scripts", {}).items():
    mod, func = target.split(":")
    path = os.path.join(site, "bin", name)
    with open(path, "w") as f:
        f.write(f"#!{os.path.realpath(sys.executable)}\nimport sys\nfrom {mod} import {func}\n"
                f"sys.exit({func}())\n")
    os.chmod(path, 0o755)
info = os.path.join(site, f"{proj['name']}-{proj['version']}.dist-info")
os.makedirs(info, exist_ok=True)
with open(os.path.join(info, "METADATA"), "w") as f:
    f.write(f"Metadata-Version: 2.1\nName: {proj['name']}\nVersion: {proj['version']}\n")
with open(os.path.join(info, "entry_points.txt"), "w") as f:
    for group, entries in proj.get("entry-points", {}).items():
        f.write(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
    f.write("[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in proj.get("scripts", {}).items()))
PYEOF

{
  date -u; nvidia-smi -L 2>&1; "$PY" -V
  "$PY" -c "import torch; print('torch', torch.__version__, torch.cuda.is_available())" 2>&1
  "$PY" -m pip list 2>/dev/null | grep -iE "^(cuda|nvidia-cuda|xdsl|numpy|ml.dtypes|pytest|hypothesis) "
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

status=0
summary="$OUT/summary.txt"
: >"$summary"
# GPU_CHECK_STAGES: the stages to run, e.g. "gpu-tests benchmarks"; "all": every stage.
DEFAULT_STAGES="gpu-tests frontend-on-gpu full-tests conformance-on-gpu fuzz-on-gpu transformers model-families matmul adam benchmarks"
STAGES=${GPU_CHECK_STAGES:-$DEFAULT_STAGES}
[ "$STAGES" = all ] && STAGES="$DEFAULT_STAGES sanitizers"
stage() {  # stage NAME TIMEOUT LOG CMD...
  local name=$1 limit=$2 log=$3; shift 3
  case " $STAGES " in *" $name "*) ;; *) echo "=== $name: skipped (GPU_CHECK_STAGES)"; return ;; esac
  echo "=== $name: $*"
  local t0=$SECONDS
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  tail -n 25 "$log"
  local line
  line=$(grep -E "(passed|failed|errors?|skipped|deselected|no tests ran).* in [0-9.]+s|fusions, [0-9]+ failures" "$log" | tail -n 1)
  local san
  san=$(grep -Eo "(ERROR|RACECHECK) SUMMARY: .*" "$log" | tail -n 2 | tr '\n' ' ')
  echo "$name: rc=$rc $((SECONDS - t0))s ${line}${san:+ | ${san% }}" | tee -a "$summary"
  [ "$rc" -eq 0 ] || status=1
}

stage gpu-tests "${GPU_CHECK_GPU_TIMEOUT:-480}" "$OUT/gpu_tests.log" \
  "$PY" -m pytest -m gpu -vv -s -rs -p no:cacheprovider tests
stage frontend-on-gpu "${GPU_CHECK_FRONTEND_TIMEOUT:-300}" "$OUT/frontend_gpu.log" \
  env FUSER_TEST_DEVICE=cuda "$PY" -m pytest -rs -p no:cacheprovider tests/frontend
stage full-tests "${GPU_CHECK_FULL_TIMEOUT:-240}" "$OUT/full_tests.log" \
  "$PY" -m pytest -rs -p no:cacheprovider tests
stage conformance-on-gpu "${GPU_CHECK_CONFORMANCE_TIMEOUT:-300}" "$OUT/conformance_gpu.log" \
  env FUSER_CONFORMANCE_DEVICE=cuda "$PY" -m pytest -rsxX -p no:cacheprovider tests/conformance
# Random fusions through the generated kernels: failures grouped by cause, with seeds
# (`python -m tests.fuzz.triage SEED SEED+1 -v --cuda` reproduces one).
# shellcheck disable=SC2086
stage fuzz-on-gpu "${GPU_CHECK_FUZZ_TIMEOUT:-420}" "$OUT/fuzz_gpu.log" \
  "$PY" -m tests.fuzz.triage ${GPU_CHECK_FUZZ_SEEDS:-0 2000} --cuda --workers "${GPU_CHECK_FUZZ_WORKERS:-14}" \
  --stages execute,segment,resize,replay

# compute-sanitizer over every GPU test (opt-in, see top): tools/sanitize.sh shards the
# `pytest -m gpu` node ids and runs each (tool, shard) as its own process, all at once.
stage sanitizers "${GPU_CHECK_SANITIZERS_TIMEOUT:-560}" "$OUT/sanitizers.log" \
  bash tools/sanitize.sh "$OUT/sanitize" memcheck racecheck
stage memcheck "${GPU_CHECK_MEMCHECK_TIMEOUT:-560}" "$OUT/memcheck.log" \
  bash tools/sanitize.sh "$OUT/sanitize" memcheck
stage racecheck "${GPU_CHECK_RACECHECK_TIMEOUT:-560}" "$OUT/racecheck.log" \
  bash tools/sanitize.sh "$OUT/sanitize" racecheck
# One training step of GPT-2 small and a Llama block through torch.compile(backend="fuser"),
# against eager and inductor (issue 16; needs transformers: .whl/tf).
stage transformers "${GPU_CHECK_TRANSFORMERS_TIMEOUT:-420}" "$OUT/transformers.log" \
  "$PY" benchmarks/transformer_step.py --steps 10 --json "$OUT/transformers.jsonl"
# A training step of 24 tiny Hugging Face families through the backend on CUDA, against
# eager, and what stayed in torch (exit 1 on an error or a gradient off by more than 1e-4).
stage model-families "${GPU_CHECK_FAMILIES_TIMEOUT:-300}" "$OUT/families.log" \
  "$PY" benchmarks/model_families.py --device cuda --json "$OUT/families.jsonl"
# linear + bias + GELU against the plain GEMM (issue 16: >= 0.9 of its time).
stage matmul "${GPU_CHECK_MATMUL_TIMEOUT:-180}" "$OUT/matmul.log" \
  "$PY" benchmarks/matmul.py --json "$OUT/matmul.jsonl"
# An Adam step written in place (one kernel) against torch (exit 1 on a wrong result).
stage adam "${GPU_CHECK_ADAM_TIMEOUT:-120}" "$OUT/adam.log" \
  "$PY" benchmarks/adam_step.py --clip 1.0 --json "$OUT/adam.json"
if [ -f benchmarks/run.py ]; then
  # GPU_CHECK_BENCH_ARGS, e.g. "--only gelu,softmax --no-compile"
  # shellcheck disable=SC2086
  stage benchmarks "${GPU_CHECK_BENCH_TIMEOUT:-120}" "$OUT/bench.log" "$PY" benchmarks/run.py ${GPU_CHECK_BENCH_ARGS:-} --json "$OUT/bench.jsonl"
fi
echo "=== summary"
cat "$summary"
exit $status
