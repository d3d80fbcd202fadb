#!/usr/bin/env bash
# Session 13 call 4 (~200 s): the Vulkan head groups moved from a push constant to specialization constant 31, after
# call 3 found the portable shaders 20-23% slower with the push-constant form (175 registers and 320 bytes of
# spills, against 244-251 and none in session 12). Portable timings with pipeline stats, KHR conformance (groups of
# 16 now compiled in), KHR causal groups of 16 against one group.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session13_call4.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "portable and KHR"
FT_VK_TIMEOUT=60; FT_VK_DEADLINE=200
P="$B/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10"
vk portable FLASHTILE_VK_PIPELINE_STATS=1 $P --dim 64,128,256 --seq 1024,4096 --path vulkan_portable
vk khr_g16 FLASHTILE_VK_PIPELINE_STATS=1 $P --dim 64,128,256 --seq 1024,4096 --causal 1 --path vulkan_coopmat
vk khr_all FLASHTILE_VK_HEAD_GROUP=0 $P --dim 64,128,256 --seq 1024,4096 --causal 1 --path vulkan_coopmat
grep "pipeline stats attn_portable\|pipeline stats attn_coopmat " "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-200 | sort -u
step "conformance on KHR and portable"
timeout 100 $B/flashtile_tests --ft-backend=vulkan --ft-path=vulkan_coopmat -tc='conformance*' > "$OUT/conformance.log" 2>&1
echo "KHR conformance exit $?"
timeout 60 $B/flashtile_tests --ft-backend=vulkan --ft-path=vulkan_portable -tc='conformance: every*' >> "$OUT/conformance.log" 2>&1
echo "portable conformance exit $?"
grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
step done
