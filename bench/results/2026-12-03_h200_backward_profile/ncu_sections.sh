#!/usr/bin/env bash
set -u
B=.bundle
export LD_LIBRARY_PATH=$PWD/$B FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
for shape in 1,16384,16384,16,16,128 2,8192,8192,32,32,64; do
  timeout 70 ncu --clock-control none -k regex:sm90_bwd_kernel --launch-skip 3 -c 1 $S \
    $B/flashtile_bench --backend cuda --path cuda_sm90 --backward --no-grid --dtype bf16 --shape $shape --iters 1 --warmup 3 --warmup-ms 0 > $OUT/ncu_$shape.txt 2>&1
  echo "== $shape rc=$?"; grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers Per|Achieved Occupancy|Stall|L1/TEX Hit|L2 Hit" $OUT/ncu_$shape.txt | head -25
done
