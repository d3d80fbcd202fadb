#!/usr/bin/env bash
# Session 10, fourth device call (~330 s): the register softmax as a probed default. The device now probes the KHR
# accumulator layout when it opens (Caps::khr_acc_layout, `flashtile info` shows it) and the KHR path runs the
# register softmax (spec id 28 = the layout) at d 64/128 where it is known, with O stored straight from the
# accumulators and no score tile in shared memory, which lets 8 subgroups share a 64-key K/V tile within 48 KB.
# 1. flashtile info; conformance on the Vulkan backend by default and with FLASHTILE_VKCM_REGSM=0 (the plain shader).
# 2. KHR d 64/128, f16, issue 5's cells, each config in its own process: the default (4,64 / 4,32 with the register
#    softmax), REGSM=0 (the plain shader), tiles 8,64,1,1 and 8,32,1,1 and 4,64,1,0 (FLASHTILE_VKCM_TILE), default again.
# run(carry=[".bundle", ".gl"], timeout_s=480, command='bash bench/tune/session10_call4.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=70 FT_VK_DEADLINE=400
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "info"
timeout 60 $B/flashtile info 2>&1 | grep -iE "vulkan|coopmat|layout|H200" | head -12
step "conformance: default, then REGSM=0"
for m in default 0; do
  echo "######## FLASHTILE_VKCM_REGSM=$m" >> "$OUT/conformance.log"
  if [ $m = default ]; then e=(); else e=(FLASHTILE_VKCM_REGSM=$m); fi
  env "${e[@]}" timeout 150 $B/flashtile_tests --ft-backend=vulkan -tc='conformance*' > /tmp/conf$m.log 2>&1
  echo "regsm $m exit $?"
  grep -E "conformance:|test cases|assertions" /tmp/conf$m.log >> "$OUT/conformance.log"
  grep -B3 -A12 "ERROR" /tmp/conf$m.log | head -40 >> "$OUT/conformance.log"
done
grep -E "####|test cases|coopmat:" "$OUT/conformance.log" | head -20
step "KHR configs"
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128 --path vulkan_coopmat)
vk default FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
vk plain FLASHTILE_VKCM_REGSM=0 $B/flashtile_bench "${a[@]}"
for t in 8,64,1,1 8,32,1,1 4,64,1,0; do
  vk "t$t" FLASHTILE_VKCM_TILE=$t FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
done
vk default2 $B/flashtile_bench "${a[@]}"
grep "pipeline stats attn_coopmat " "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq | head -20
step done
