#!/usr/bin/env bash
# Variants on the GPU paths, plain-kernel regression, and a few timings: one device call, each step bounded.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
B=.bundle
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/$B FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
DEADLINE=$(( $(date +%s) + ${BUDGET:-540} ))
start=$(date +%s)
run() {  # run SECONDS LOGNAME NAME COMMAND...
  local t=$1 log=$2 name=$3; shift 3
  local left=$(( DEADLINE - $(date +%s) ))
  [ $left -lt 10 ] && { echo "SKIPPED (no time): $name" | tee -a $OUT/summary.txt; return; }
  [ $t -gt $left ] && t=$left
  echo "==== $name ($(( $(date +%s) - start )) s)" >> $OUT/$log.log
  local t0=$(date +%s)
  timeout $t "$@" >> $OUT/$log.log 2>&1
  local rc=$?
  echo "$name: rc=$rc ($(( $(date +%s) - t0 )) s)" | tee -a $OUT/summary.txt
  tail -3 $OUT/$log.log | sed 's/^/    /' | cut -c1-250
}
T="$B/flashtile_tests"
run 90 kern "sm90_check --no-bench" $B/sm90_check --no-bench
run 90 kern "sm90_bwd_check" $B/sm90_bwd_check
run 150 conf "conformance cuda variants" $T --ft-backend=cuda -tc='conformance variants*'
run 150 conf "conformance cuda (all)" $T --ft-backend=cuda -tc='conformance*' -tce='conformance variants*'
run 60 kern "cuda_sm80_check" $B/cuda_sm80_check --no-time
run 120 conf "conformance vulkan variants+serving" $T --ft-backend=vulkan -tc='conformance variants*,conformance serving*'
run 90 py "python variants+backward" python3 -m unittest discover -s tests/python -p 'test_[vb]*.py'
run 90 ring "ring on cuda" $T --ft-backend=cuda -tc='ring*'
run 60 speed "sm90_check --variants" $B/sm90_check --variants
run 60 speed "bench sm80 variants" bash -c "for v in '' '--softcap 50' '--alibi' '--sinks' '--window 4095,0'; do $B/flashtile_bench --backend cuda --path cuda_sm80 --no-grid --dtype bf16 --shape 1,16384,16384,16,16,128 --shape 1,32768,32768,16,16,128 \$v --iters 10 | grep -E 'sm80_fwd'; done"
run 60 speed "peers quick (sm90 plain regression)" python3 bench/peers.py --quick --peers cudnn --dim 64,128 --out $OUT/peers
run 60 speed "coopmat2 causal 1 s warm-up" $B/flashtile_bench --backend vulkan --path vulkan_coopmat2 --causal 1 --dtype f16 --seq 1024,4096 --warmup-ms 1000 --iters 10
run 60 speed "step profile" python3 $B/step_profile.py
run 60 speed "vulkan portable backward" $B/flashtile_bench --backend vulkan --path vulkan_portable --backward --dtype f16 --dim 128 --seq 1024,4096 --iters 5
run 60 kern "racecheck sm90_bwd_check --small" compute-sanitizer --tool racecheck --error-exitcode 1 $B/sm90_bwd_check --small
echo "==== done ($(( $(date +%s) - start )) s)"; cat $OUT/summary.txt
