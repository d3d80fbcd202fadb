#!/usr/bin/env bash
# Session 10, sixth device call (~120 s): main as it lands, after call 5 made 8,64,1,1 (with the register softmax)
# the KHR d128 default: `flashtile info`, conformance on the Vulkan backend, and the KHR rows of issue 5's table.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session10_call6.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=90 FT_VK_DEADLINE=200
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "info"
timeout 60 $B/flashtile info 2>&1 | grep -iE "coopmat_acc_layout|d128" | head -6
conformance vulkan
step "KHR table"
vk khr FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 \
  --dim 64,128,256 --seq 1024,4096,16384 --path vulkan_coopmat
grep "pipeline stats attn_coopmat " "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-220 | sort | uniq | head -12
step done
