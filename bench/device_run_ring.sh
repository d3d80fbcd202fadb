#!/usr/bin/env bash
# Ring attention's checks on the device machine, each step time-bounded, logs under $OUT/ring.log:
#   one GPU: the simulated ring on CUDA (tests/ring.cpp; `flashtile run --ring` forward and backward, contiguous and
#   zigzag, with compute-sanitizer memcheck on one small case);
#   2+ GPUs: tests/ring_nccl_check (the grid against the single-GPU result, then --bench: the scaling table at 128k
#   tokens causal d128, fwd+bwd) and tests/python/ring_torchrun.py under torchrun (steps skip, exit 77, below 2 GPUs).
# Usage, from the repository root there:  bash bench/device_run_ring.sh [BUNDLE_DIR=.bundle]
# Environment: FT_RING_SEQ (131072) and FT_RING_ITERS (5) for the scaling table.
set -u
bundle=${1:-.bundle}
OUT=${OUT:-/tmp/flashtile_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/ring.log") 2>&1
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/$bundle FLASHTILE_LIBRARY=$PWD/$bundle/libflashtile.so
# libnccl for the C++ programs (flashtile dlopens libnccl.so.2): the system's, else the one PyTorch's wheel ships.
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2'; then
  nccl_dir=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
  [ -n "$nccl_dir" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$nccl_dir && echo "libnccl from $nccl_dir"
fi
start=$(date +%s)
failures=()
step() { echo; echo "==== $* ($(( $(date +%s) - start )) s)"; }
run() {  # run SECONDS NAME COMMAND...: bounded, its exit status recorded (77: skipped)
  local t=$1 name=$2
  shift 2
  step "$name"
  timeout "$t" "$@"
  local rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || failures+=("$name (exit $rc)")
}

step "environment"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 || true
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
run 200 "ring simulated (cuda)" "$bundle/flashtile_tests" --ft-backend=cuda -tc='ring*'
for sharding in "" --zigzag; do
  run 120 "run --ring 4 $sharding --backward (cuda)" "$bundle/flashtile" run --backend cuda --ring 4 $sharding \
    --backward --check --seq 4096 --heads 16 --heads-kv 4 --dim 128 --dtype bf16
done
run 200 "compute-sanitizer memcheck: run --ring 3 --zigzag" compute-sanitizer --tool memcheck --error-exitcode 1 \
  "$bundle/flashtile" run --backend cuda --ring 3 --zigzag --backward --check --seq 384 --heads 4 --heads-kv 2 \
  --dim 64 --dtype f16
run 300 "ring_nccl_check ($gpus GPUs)" "$bundle/ring_nccl_check"
run 500 "ring_nccl_check --bench" "$bundle/ring_nccl_check" --bench --seq "${FT_RING_SEQ:-131072}" \
  --iters "${FT_RING_ITERS:-5}"
if [ "$gpus" -ge 2 ]; then
  run 300 "torchrun ring_torchrun.py" torchrun --nproc-per-node "$gpus" tests/python/ring_torchrun.py
fi

step "done"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failures[@]}"
  exit 1
fi
echo "all steps passed (or skipped with the reason)"
