#!/usr/bin/env bash
# Planned first device call of session 10 (~150 s): why non-causal 8k ran 1-3% faster one CTA per tile than
# persistent at every head dim (session 8 calls 1 and 4) while 16k is faster persistent. ncu on the library's kernel
# (.bundle, the sm90 kernels unchanged since session 8) at d128 non-causal 8k and 16k, persistent (--ctas 0, the
# configured dynamic scheduler) against one CTA per tile (--ctas -1): duration, L2 hit rate and DRAM bytes, the
# tail (SM activity), per launch mode.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session10_call1.sh')
# Files: main.log ncu.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "ncu"
for s in 8192 16384; do
  for ctas in 0 -1; do
    echo "######## d128 non-causal $s ctas $ctas" >> "$OUT/ncu.log"
    timeout 90 ncu --clock-control none --launch-skip 4 --launch-count 1 --section SpeedOfLight \
      --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section SchedulerStats \
      --kernel-name regex:sm90_fwd $B/sm90_check --bench-only --cell 128,$s,0 --ctas $ctas >> "$OUT/ncu.log" 2>&1
    echo "exit $? $s $ctas"
  done
done
grep -E "########|Duration|DRAM Throughput|L2 Hit Rate|Memory Throughput|Grid Size|Waves Per SM|Achieved Occupancy|No Eligible" \
  "$OUT/ncu.log" | head -60
step done
