#!/usr/bin/env bash
# Planned first device call of session 10 (~250 s). 1. Why non-causal 8k ran 1-3% faster one CTA per tile than
# persistent at every head dim (session 8 calls 1 and 4) while 16k is faster persistent. ncu on the library's kernel
# (.bundle, the sm90 kernels unchanged since session 8) at d128 non-causal 8k and 16k, persistent (--ctas 0, the
# configured dynamic scheduler) against one CTA per tile (--ctas -1): duration, L2 hit rate and DRAM bytes, the
# tail (SM activity), per launch mode. 2. The row-group portable shader with fewer lanes a row group (tpr 4 at d128,
# 2 at d64; R 2: fewer partial scores and shuffles for the same Q/O registers) against the shipped tiles, each config
# in its own process, f16 4096 (the bar cell, d128 4k: 38.9 against 44.6 in session 9). Every config passed
# conformance on lavapipe here (FT_VK_RG_CONFIG=... FLASHTILE_VK_VARIANT=_rg flashtile_tests -tc='conformance*').
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session10_call1.sh')
# Files: main.log ncu.log vk.csv vk_out.log (bench/tune/vk_table.py cannot split processes: read vk.csv by tag).
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
step "row-group sweep"
FT_VK_TIMEOUT=60
args=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 64,128 --seq 4096 --path vulkan_portable)
cfgs=(
  "d128=64:16:128:4,d64=64:16:64:2"
  "d128=64:32:128:4,d64=64:32:64:2"
  "d128=128:16:256:4,d64=128:16:128:2"
  "d128=32:16:64:4,d64=32:16:32:2"
  "d128=64:8:128:4,d64=64:8:64:2"
)
vk shipped FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${args[@]}"
for i in "${!cfgs[@]}"; do
  vk "rg$((i + 1)) ${cfgs[$i]}" FT_VK_RG_CONFIG="${cfgs[$i]}" FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${args[@]}"
done
vk shipped2 $B/flashtile_bench "${args[@]}"
grep "pipeline stats attn_portable_rg" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-200 | sort | uniq | head -30
step done
