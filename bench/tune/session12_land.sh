#!/usr/bin/env bash
# Session 12, the landing call (~450 s): main with Options::allow_reduced_precision_accumulation (coopmat2 f16 O,
# 128-row tiles) and coopmat2 d64's 128,64,128 default tile. Issue 5's table (default precision, with flashtile CUDA
# and cuDNN f16 from this call), coopmat2 again with --reduced-precision, sampled-row errors of both at 16k (CLI
# --check), the interop example, and conformance on every Vulkan path (with the reduced-precision test).
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=560, command='bash bench/tune/session12_land.sh')
# Files: main.log checks.log conformance.log vk.csv vk_out.log peers_f16.log clocks.log precision.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "info"
timeout 60 $B/flashtile info 2>&1 | grep -E "vulkan:0|coopmat_acc_layout|d64 causal"
step "checks"
ck $B/example_vulkan_interop
grep -E "^==|^exit|OK|MISMATCH|path" "$OUT/checks.log"
issue5_table 260
FT_VK_TIMEOUT=90 FT_VK_DEADLINE=330 vk table_o16 $B/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 \
  --iters 10 --dim 64,128,256 --seq 1024,4096,16384 --path vulkan_coopmat2 --reduced-precision
step "precision at 16k (64 sampled rows)"
for d in 64 128 256; do for c in --no-causal --causal; do for r in "" --reduced-precision; do
  timeout 60 $B/flashtile run --backend vulkan --path vulkan_coopmat2 --seq 16384 --heads $((2048 / d)) --dim $d $c \
    $r --check --json --iters 2 >> "$OUT/precision.log" 2>&1
done; done; done
grep -o '"kernel":"[^"]*"\|"max_rel_error":[^,]*\|"ok":[a-z]*' "$OUT/precision.log" | paste - - - | head -20
FT_CONF_TIMEOUT=240 conformance vulkan
grep -E "reduced precision allowed|skipped:" "$OUT/conformance.log"
step done
