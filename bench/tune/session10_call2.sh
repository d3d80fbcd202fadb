#!/usr/bin/env bash
# Session 10, second device call (~250 s): the KHR shader's register softmax (spec id 28, FLASHTILE_VKCM_REGSM).
# 1. Conformance on the Vulkan backend with REGSM=2 (the accumulator layout assumed without the shader's check: passes
#    only if the layout is the one the shader assumes) and REGSM=1 (checked; the shipped form if it wins).
# 2. A/B against the shared-memory softmax, each config in its own process, interleaved twice, f16, d 64/128/256 at
#    1k/4k/16k, causal and not (issue 5's cells), with pipeline statistics.
# Spec id 28's values were redefined after calls 2-3 (now 0 off, 1/2 a layout, 15 the probe; no run-time check):
# this script records what ran then and needs that call's library.
# run(carry=[".bundle", ".gl"], timeout_s=420, command='bash bench/tune/session10_call2.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=90 FT_VK_DEADLINE=360
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "conformance, register softmax unchecked (2) and checked (1)"
for m in 2 1; do
  echo "######## FLASHTILE_VKCM_REGSM=$m" >> "$OUT/conformance.log"
  FLASHTILE_VKCM_REGSM=$m timeout 150 $B/flashtile_tests --ft-backend=vulkan -tc='conformance*' > /tmp/conf$m.log 2>&1
  echo "regsm $m exit $?"
  grep -E "conformance:|test cases|assertions" /tmp/conf$m.log >> "$OUT/conformance.log"
  grep -B3 -A12 "ERROR" /tmp/conf$m.log | head -80 >> "$OUT/conformance.log"
done
grep -E "####|test cases|coopmat:" "$OUT/conformance.log" | head -20
step "KHR A/B"
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128,256 --path vulkan_coopmat)
for rep in 1 2; do
  vk "base$rep" FLASHTILE_VKCM_REGSM=0 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
  vk "rsm$rep" FLASHTILE_VKCM_REGSM=1 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
done
grep "pipeline stats attn_coopmat " "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq | head -20
step done
