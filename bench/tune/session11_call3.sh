#!/usr/bin/env bash
# Session 11, third device call (~330 s): main as it lands (KHR causal calls on id 29 = 3, coopmat2's one loop body
# where it won, sm90 unchanged). The checks of both issues that run on a device (tile tests, sm90_check quick,
# cuda_sm80_check, conformance on both backends and every path, the C API test, both examples, the Vulkan interop
# example included), KHR tiles for the d128 1k causal cell, then issue 5's table with flashtile CUDA and cuDNN f16
# from this call.
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=560, command='bash bench/tune/session11_call3.sh')
# Table: bench/tune/vk_table.py vk.csv --peers peers_f16.log (the process tagged "table").
# Files: main.log checks.log conformance.log vk.csv vk_out.log peers_f16.log clocks.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "info"
timeout 60 $B/flashtile info 2>&1 | head -20
step "checks"
ck $B/tile_tests
ck $B/sm90_check --no-bench --quick --ctas 0
ck $B/cuda_sm80_check
ck $B/flashtile_c_api_test
ck $B/example_basic
ck $B/example_vulkan_interop
grep -E "^==|^exit|passed|FAIL|ERROR|test cases|OK|MISMATCH|path|error" "$OUT/checks.log"
conformance cuda vulkan
step "KHR tiles, d128 causal (id 29 = 3)"
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096 --dim 128 --path vulkan_coopmat --causal 1)
FT_VK_TIMEOUT=40 vk khr_default $B/flashtile_bench "${a[@]}"
for t in 4,64,1,1 8,32,1,1 4,32,1,1; do FT_VK_TIMEOUT=40 vk "khr_t$t" FLASHTILE_VKCM_TILE=$t $B/flashtile_bench "${a[@]}"; done
FT_VK_TIMEOUT=40 vk khr_default2 $B/flashtile_bench "${a[@]}"
issue5_table 450
grep "pipeline stats" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq | head -30
step done
