#!/usr/bin/env bash
# Session 9, sixth device call (~150 s): coopmat2's shader options at d64/d128 (non-causal 1.03-1.18x cm2 against
# 1.2x after call 5), without rebuilding: lazy rescaling, wider and no narrow row matrices. Each in its own process,
# the default first and last, f16, 1k/4k/16k.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session9_call6.sh')
# Files: main.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=220
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --path vulkan_coopmat2 --dim 64,128)
vk cm2 $B/flashtile_bench "${a[@]}"
for o in aligned,narrow,fold,lazy aligned,narrow32,fold aligned,fold aligned,narrow,fold,qgl; do
  vk "cm2_$o" FLASHTILE_VKCM2_OPT=$o FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
done
vk cm2b $B/flashtile_bench "${a[@]}"
grep "pipeline stats" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-220 | sort | uniq | head -30
step done
