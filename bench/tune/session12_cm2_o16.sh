#!/usr/bin/env bash
# Ran on 4165a87, where FLASHTILE_VKCM2_O16=1 switched coopmat2 to f16 O. That variable is gone since: today the
# f16-O entries need Options::allow_reduced_precision_accumulation (flashtile_bench --reduced-precision).
# A session-12 experiment (~220 s, nothing to build: main's bundle has the attn_coopmat2_o16 module): coopmat2 with
# O accumulated in f16 (FLASHTILE_VKCM2_O16=1), which session 11 call 6 measured at d128 +7..8% and d256 +12..23%.
# Two questions:
# 1. Precision: conformance on vulkan_coopmat2 with it on. Which cases pass flashtile's f16/bf16 tolerances, and by
#    how much the others miss. This decides whether an opt-in accumulation mode could be offered.
# 2. The rest of the d256 gap to llama.cpp's cm2 (161 against 197 at 16k). The 64 registers f16 O frees may let Q
#    stay in registers (no qgl), or let wider score matrices (no narrow) or 64-key tiles fit. Each config runs in its
#    own process.
# run(carry=[".bundle", ".gl"], timeout_s=400, command='bash bench/tune/session12_cm2_o16.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=330
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "conformance, f16 O"
FLASHTILE_VKCM2_O16=1 FLASHTILE_VK_PATHS=vulkan_coopmat2 timeout 150 $B/flashtile_tests --ft-backend=vulkan \
  -tc='conformance*' > "$OUT/conformance.log" 2>&1
echo "exit $?"
grep -cE "ERROR" "$OUT/conformance.log"
grep -E "conformance:|test cases" "$OUT/conformance.log"
step "d256 configs with f16 O"
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 4096,16384 --dim 256 --path vulkan_coopmat2)
vk f32o FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
vk o16 FLASHTILE_VKCM2_O16=1 $B/flashtile_bench "${a[@]}"
vk o16_qreg FLASHTILE_VKCM2_O16=1 FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VK_PIPELINE_STATS=1 \
  $B/flashtile_bench "${a[@]}"
vk o16_wide FLASHTILE_VKCM2_O16=1 FLASHTILE_VKCM2_OPT=aligned,fold,qgl FLASHTILE_VK_PIPELINE_STATS=1 \
  $B/flashtile_bench "${a[@]}"
vk o16_bn64 FLASHTILE_VKCM2_O16=1 FLASHTILE_VKCM2_TILE=64,64,128 FLASHTILE_VK_PIPELINE_STATS=1 \
  $B/flashtile_bench "${a[@]}"
vk o16_again FLASHTILE_VKCM2_O16=1 $B/flashtile_bench "${a[@]}"
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq
step done
