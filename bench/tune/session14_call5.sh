#!/usr/bin/env bash
# Session 14 call 5 (~130 s; carry .bundle and .gl): coopmat2 by default (f32 O) misses its 1.2x bar non-causal at
# d64 (1.10-1.18x) and d128 (1.09-1.16x). Lazy rescaling (id 26, with narrow and fold) lost at d256 in session 4;
# d64/d128 never timed with it. FLASHTILE_VKCM2_OPT=aligned,narrow,fold,lazy against the default (aligned, narrow,
# fold), twice interleaved, non-causal d64/d128 1k/4k/16k; then conformance on coopmat2 with it (spiky keys included).
# run(carry=[".bundle", ".gl"], timeout_s=240, command='bash bench/tune/session14_call5.sh')
# Files: main.log vk.csv vk_out.log conformance.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
FT_VK_TIMEOUT=40; FT_VK_DEADLINE=150
P="$FT_BUNDLE/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --path vulkan_coopmat2"
P="$P --dim 64,128 --seq 1024,4096,16384 --causal 0"
step "coopmat2 lazy rescaling, non-causal"
for rep in 1 2; do
  vk cm2_default $P
  vk cm2_lazy FLASHTILE_VKCM2_OPT=aligned,narrow,fold,lazy $P
done
grep -h "vk_coopmat2" "$OUT/vk.csv" | cut -d'"' -f2 | sort | uniq -c
step "coopmat2 conformance with lazy rescaling"
timeout 80 env FLASHTILE_VKCM2_OPT=aligned,narrow,fold,lazy $FT_BUNDLE/flashtile_tests --ft-backend=vulkan \
  --ft-path=vulkan_coopmat2 -tc='conformance: every*,conformance: running*' > "$OUT/conformance.log" 2>&1
echo "coopmat2 lazy conformance exit $?"
grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
step done
