#!/usr/bin/env bash
# One device call: phases given as arguments (check, speed, train, vk), each step bounded, logs under $OUT.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
B=.bundle
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/$B FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
DEADLINE=$(( $(date +%s) + ${BUDGET:-570} ))
start=$(date +%s); failures=()
run() {  # run SECONDS LOGNAME NAME COMMAND...
  local t=$1 log=$2 name=$3; shift 3
  local left=$(( DEADLINE - $(date +%s) ))
  [ $left -lt 15 ] && { echo "SKIPPED (no time): $name" | tee -a $OUT/summary.txt; return; }
  [ $t -gt $left ] && t=$left
  echo "==== $name ($(( $(date +%s) - start )) s)" | tee -a $OUT/$log.log
  local t0=$(date +%s)
  timeout $t "$@" >> $OUT/$log.log 2>&1
  local rc=$?
  echo "$name: rc=$rc ($(( $(date +%s) - t0 )) s)" | tee -a $OUT/summary.txt
  tail -4 $OUT/$log.log | sed 's/^/    /'
}
san="compute-sanitizer --error-exitcode 1"
for phase in "$@"; do case $phase in
check)
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/summary.txt
  run 60 kern "sm80_serving_check" $B/cuda_sm80_serving_check
  run 60 kern "sm80_serving_check --time" $B/cuda_sm80_serving_check --time
  run 150 kern "memcheck sm80_serving_check --small" $san --tool memcheck $B/cuda_sm80_serving_check --small
  run 90 kern "cuda_sm80_check" $B/cuda_sm80_check
  run 120 kern "sm90_bwd_check --time (dq box)" $B/sm90_bwd_check --time
  run 120 kern "sm90_bwd_check_main --time" $B/sm90_bwd_check_main --time
  run 150 kern "memcheck sm90_bwd_check --small" $san --tool memcheck $B/sm90_bwd_check --small
  run 240 conf "conformance cuda" $B/flashtile_tests --ft-backend=cuda -tc='conformance*'
  run 240 conf "conformance vulkan" $B/flashtile_tests --ft-backend=vulkan -tc='conformance*'
  run 200 py "python tests" python3 -m unittest discover -s tests/python -p 'test_*.py' -v
  ;;
speed)
  run 300 peersbwd "peers_backward full grid" python3 bench/peers_backward.py --out $OUT
  run 200 decode "decode peers (sm90, sm80 forced)" python3 bench/peers.py --seq 3 --dtype bf16 --peers fa2,cudnn \
      --flashtile-paths cuda_sm90,cuda_sm80 --shape 1,1,65536,32,8,128 --shape 16,1,8192,32,8,128 \
      --shape 64,1,4096,32,8,128 --shape 8,16,32768,32,8,128,1 --out $OUT/decode
  ;;
vk)
  run 200 vk "vulkan forward bench" $B/flashtile_bench --backend vulkan --dtype f16 --seq 1024,4096,16384 --csv $OUT/vk.csv
  run 200 vk "vulkan backward bench (portable)" $B/flashtile_bench --backend vulkan --path vulkan_portable --backward --dtype f16 --dim 64,128 --seq 1024,4096 --csv $OUT/vkbwd.csv
  ;;
train)
  run 400 train "train_gpt --compare --steps 300" python3 examples/train_gpt.py --compare --steps 300
  ;;
esac; done
echo "==== done ($(( $(date +%s) - start )) s)"; cat $OUT/summary.txt
