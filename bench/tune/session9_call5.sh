#!/usr/bin/env bash
# Session 9, last device call (~90 s): main as it lands (coopmat2 d128 on 64,128,128 after call 4): conformance on
# every Vulkan path, and the coopmat2 d128 cells of issue 5's table.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session9_call5.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=90
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
conformance vulkan
grep -o "vk_coopmat2[a-z0-9_]*<d128[^>]*>" "$OUT/conformance.log" | sort | uniq -c | head
vk main $B/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 128 --seq 1024,4096,16384 \
  --path vulkan_coopmat2
grep "coopmat2" "$OUT/vk_out.log" | head -8
step done
