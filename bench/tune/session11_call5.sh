#!/usr/bin/env bash
# Session 11, fifth device call (~300 s): main as it lands (call 3's library plus causal launches longest-first
# across heads where call 4 measured a win: portable, KHR, coopmat2 d256). The interop example, issue 5's table with
# flashtile CUDA (cuda_sm90 in the same process) and cuDNN f16 from this call, then conformance on every Vulkan path.
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=420, command='bash bench/tune/session11_call5.sh')
# Table: bench/tune/vk_table.py vk.csv --peers peers_f16.log.
# Files: main.log checks.log conformance.log vk.csv vk_out.log peers_f16.log clocks.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "info"
timeout 60 $B/flashtile info 2>&1 | grep -E "vulkan:0|coopmat_acc_layout|d64 causal"
step "checks"
ck $B/example_vulkan_interop
grep -E "^==|^exit|OK|MISMATCH|path" "$OUT/checks.log"
issue5_table 300
conformance vulkan
step done
