#!/usr/bin/env bash
# The profile of the first (row-copy) sm90 decode kernel and of sm80's, one launch each (bundle .bundle_dec).
set -u
FT_BUNDLE=.bundle_dec . bench/tools/device_lib.sh
B=.bundle_dec
sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy"
for path in cuda_sm90 cuda_sm80; do
  for shape in "--batch 64 --seq-k 4096" "--batch 1 --seq-k 65536"; do
    timeout 100 ncu --clock-control none -k regex:decode_kernel --launch-skip 2 --launch-count 1 $sec \
      $B/flashtile run $shape --seq 1 --heads 32 --heads-kv 8 --dim 128 --dtype bf16 --no-causal --backend cuda \
      --path $path --iters 3 > "$OUT/ncu_${path}_$(echo $shape | tr -dc 0-9).log" 2>&1
  done
done
