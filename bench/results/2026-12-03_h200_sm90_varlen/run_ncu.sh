#!/usr/bin/env bash
# ncu of the sm90 varlen kernel beside the dense one on the same tokens (bench/tools/fwd_call.py: varlen_prefill.py's
# batch, packed or as [16, 4096]), d128 bf16, causal and not: where the 5-13% to the dense calls goes (varlen_ncu.log).
# Run after another script of the same call unpacked the bundle: FT_BUNDLE (default .bundle_w).
set -u
FT_BUNDLE=${FT_BUNDLE:-.bundle_w}
. bench/tools/device_lib.sh
export FLASHTILE_LIBRARY=$PWD/$FT_BUNDLE/libflashtile.so.0.5.0
s="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats"
s="$s --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats"
n="ncu --clock-control none --launch-skip 1 --launch-count 1 --kernel-name regex:sm90_fwd"
for c in "" --causal; do for m in varlen dense; do
  echo "######## $m d128 ${c:-full}" >> $OUT/varlen_ncu.log
  timeout 60 $n $s python3 bench/tools/fwd_call.py $m 128 $c --calls 2 >> $OUT/varlen_ncu.log 2>&1; echo "$m ${c:-full} exit $?"
done; done
grep -E "########|Duration|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|DRAM Throughput|L2 Hit|Compute \(SM\) Throughput" $OUT/varlen_ncu.log
step done
