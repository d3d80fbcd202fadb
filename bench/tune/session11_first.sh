#!/usr/bin/env bash
# Session 11's first device call, both ready experiments in one (~300 s), on branch wip/cm2-onebody's Vulkan-only
# bundle (.bundle-cm2: main's KHR code plus coopmat2's spec id 30; rebuild it from the branch if main moved):
# 1. conformance on every Vulkan path as shipped (coopmat2's `_full` entries on), then vulkan_coopmat with id 29 = 7
#    everywhere;
# 2. KHR causal, id 29's bits one by one (session11_call1.sh): d64/d128 at 1k/4k/16k, 0 first and last;
# 3. coopmat2 one loop body against the peeled form (session11_cm2_full.sh), d 64/128/256, twice interleaved.
# run(carry=[".bundle-cm2", ".gl"], timeout_s=480, command='bash bench/tune/session11_first.sh')
# Files: main.log conformance.log vk.csv vk_out.log (read vk.csv by tag).
set -u
FT_LOG=main.log FT_VK_TIMEOUT=45 FT_VK_DEADLINE=420 FT_BUNDLE=${FT_BUNDLE:-.bundle-cm2}
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "conformance"
timeout 200 $B/flashtile_tests --ft-backend=vulkan -tc='conformance*' > /tmp/conf_cm2.log 2>&1
echo "all Vulkan paths (coopmat2's _full entries on) exit $?"
FLASHTILE_VK_PATHS=vulkan_coopmat FLASHTILE_VKCM_OPT=7 timeout 150 $B/flashtile_tests --ft-backend=vulkan \
  -tc='conformance*' > /tmp/conf_khr.log 2>&1; echo "khr (id 29 = 7) exit $?"
cat /tmp/conf_cm2.log /tmp/conf_khr.log | grep -E "conformance:|test cases|ERROR" | head -30 > "$OUT/conformance.log"
cat "$OUT/conformance.log"
step "KHR causal, id 29 bits"
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128 --path vulkan_coopmat
   --causal 1)
for o in 0 1 2 4 3 5 6 7 0; do vk "khr_opt$o" FLASHTILE_VKCM_OPT=$o $B/flashtile_bench "${a[@]}"; done
step "coopmat2 one body"
c=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128,256 --path vulkan_coopmat2)
for rep in 1 2; do
  vk "cm2_peeled.$rep" FLASHTILE_VKCM2_FULL=0 $B/flashtile_bench "${c[@]}"
  vk "cm2_full.$rep" FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${c[@]}"
done
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq | head -12
step done
