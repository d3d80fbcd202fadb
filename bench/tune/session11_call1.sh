#!/usr/bin/env bash
# Planned first device call of session 11 (~200 s): which of the KHR shader's id 29 bits costs causal 4k/16k. Session
# 10 call 7 measured only 0 against 7: causal d128 +5.2/-1.3/-3.4% and d64 +3.7/+0.6/-1.0% at 1k/4k/16k, so causal
# calls keep 0 (the `_o7` entries refuse them). Here each bit alone and in pairs, causal only, d64/d128 f16 at
# 1k/4k/16k, each in its own process (FLASHTILE_VKCM_OPT sets id 29 on every entry), 0 first and last; and
# conformance on vulkan_coopmat with 7 everywhere (causal included). If one bit set wins at 1k and does not lose at
# 4k/16k, give the causal entries that value (coopmat_paths.cpp, khr_variant's callers).
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=360, command='bash bench/tune/session11_call1.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=40 FT_VK_DEADLINE=300
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
export FLASHTILE_VK_PATHS=vulkan_coopmat
FLASHTILE_VKCM_OPT=7 timeout 150 $B/flashtile_tests --ft-backend=vulkan -tc='conformance*' > "$OUT/conformance.log" 2>&1
echo "conformance (id 29 = 7 everywhere) exit $?"
grep -E "conformance:|test cases" "$OUT/conformance.log"
unset FLASHTILE_VK_PATHS
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128 --path vulkan_coopmat
   --causal 1)
for o in 0 1 2 4 3 5 6 7 0; do
  vk "opt$o" FLASHTILE_VKCM_OPT=$o $B/flashtile_bench "${a[@]}"
done
step done
