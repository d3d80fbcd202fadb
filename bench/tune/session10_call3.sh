#!/usr/bin/env bash
# Session 10, third device call (~420 s): the KHR accumulator layout, then the register softmax where it is known.
# Call 2 found the first assumed layout wrong (REGSM=2 then: 212 failed checks), so:
# 1. khr_layout_probe (bench/tune/khr_layout_probe.cpp, in the bundle) prints lane/element -> (row, col);
#    bench/tune/khr_layout.py says which of the shader's layouts (1, 2) it is, or 0.
# 2. If one: conformance with it assumed (L + 4: passes only if the shader agrees with the probe) and checked (L).
# 3. A/B, each config in its own process, twice interleaved: 0 (shared-memory softmax), L (checked, with the
#    fallback compiled in), L + 4 (assumed: no fallback, what a host-side probe would ship), f16, issue 5's cells.
# Spec id 28's values were redefined after calls 2-3 (now 0 off, 1/2 a layout, 15 the probe; no run-time check):
# this script records what ran then and needs that call's library.
# run(carry=[".bundle", ".gl"], timeout_s=560, command='bash bench/tune/session10_call3.sh')
# Files: main.log conformance.log vk.csv vk_out.log probe.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=90 FT_VK_DEADLINE=500
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "layout probe"
timeout 60 $B/khr_layout_probe > "$OUT/probe.log" 2>&1; echo "probe exit $?"
head -12 "$OUT/probe.log"
L=$(python3 bench/tune/khr_layout.py "$OUT/probe.log")
echo "layout $L"
[ "$L" = 0 ] && { step done; exit 0; }
step "conformance, layout $L assumed ($((L + 4))) and checked ($L)"
for m in $((L + 4)) $L; do
  echo "######## FLASHTILE_VKCM_REGSM=$m" >> "$OUT/conformance.log"
  FLASHTILE_VKCM_REGSM=$m timeout 150 $B/flashtile_tests --ft-backend=vulkan -tc='conformance*' > /tmp/conf$m.log 2>&1
  echo "regsm $m exit $?"
  grep -E "conformance:|test cases|assertions" /tmp/conf$m.log >> "$OUT/conformance.log"
  grep -B3 -A12 "ERROR" /tmp/conf$m.log | head -40 >> "$OUT/conformance.log"
done
grep -E "####|test cases|coopmat:" "$OUT/conformance.log" | head -20
step "KHR A/B"
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128,256 --path vulkan_coopmat)
for rep in 1 2; do
  for m in 0 $L $((L + 4)); do
    vk "m$m.$rep" FLASHTILE_VKCM_REGSM=$m FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
  done
done
grep "pipeline stats attn_coopmat " "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq | head -20
step done
