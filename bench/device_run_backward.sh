#!/usr/bin/env bash
# The backward's checks and measurements on the device machine, each step time-bounded, logs under $OUT:
#   kernel checks (cuda_sm80_bwd_check, sm90_bwd_check where built), the backward conformance suite on CUDA,
#   compute-sanitizer memcheck and racecheck on small cases, the Python autograd tests, peers_backward.py (against
#   SDPA's cuDNN and FA2 in one process) and examples/train_gpt.py --compare.
# Usage, from the repository root there:  bash bench/device_run_backward.sh [--quick] [BUNDLE_DIR=.bundle]
# Environment: FT_PEERS_ARGS, FT_TRAIN_ARGS add arguments; FT_SKIP_SANITIZER=1, FT_SKIP_TRAIN=1 skip a step.
set -u
quick=0
bundle=.bundle
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    *) bundle=$a ;;
  esac
done
OUT=${OUT:-/tmp/flashtile_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/backward.log") 2>&1
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/$bundle FLASHTILE_LIBRARY=$PWD/$bundle/libflashtile.so
start=$(date +%s)
failures=()
step() { echo; echo "==== $* ($(( $(date +%s) - start )) s)"; }
run() {  # run SECONDS NAME COMMAND...: bounded, its exit status recorded
  local t=$1 name=$2
  shift 2
  step "$name"
  timeout "$t" "$@"
  local rc=$?
  [ $rc -eq 0 ] || failures+=("$name (exit $rc)")
}

step "environment"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 || true
run 120 "cuda_sm80_bwd_check" "$bundle/cuda_sm80_bwd_check" $([ $quick = 1 ] || echo --time)
run 200 "conformance backward (cuda)" "$bundle/flashtile_tests" --ft-backend=cuda -tc='conformance backward*'
run 150 "python backward tests" python3 -m unittest discover -s tests/python -p 'test_backward.py'
peers_args=${FT_PEERS_ARGS:-}
[ $quick = 1 ] && peers_args="--quick $peers_args"
run "${FT_PEERS_TIMEOUT:-400}" "peers_backward.py" python3 bench/peers_backward.py $peers_args --out "$OUT"
[ "${FT_SKIP_TRAIN:-0}" = 1 ] || run 300 "train_gpt.py --compare" python3 examples/train_gpt.py --compare ${FT_TRAIN_ARGS:-}
# Last, as they may take long: the sm90 kernel check (a hang there is bounded) and the sanitizers.
[ -x "$bundle/sm90_bwd_check" ] && run "${FT_SM90_TIMEOUT:-120}" "sm90_bwd_check" "$bundle/sm90_bwd_check" $([ $quick = 1 ] || echo --time)
if [ "${FT_SKIP_SANITIZER:-0}" != 1 ]; then
  for tool in memcheck racecheck; do
    run 150 "compute-sanitizer $tool" compute-sanitizer --tool $tool --error-exitcode 1 "$bundle/cuda_sm80_bwd_check" --small
  done
fi

step "done"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failures[@]}"
  exit 1
fi
echo "all steps passed"
