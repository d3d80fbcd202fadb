#!/usr/bin/env bash
# Session 9, third device call (~400 s): the library as it lands on main (the row-group shader the portable default
# on GPUs with call 2's tiles; coopmat2 d256 reloading Q per tile). Conformance on both backends and every path,
# sm90_check quick, and issue 5's table (f16, d 64/128/256 x 1k/4k/16k x causal) with flashtile CUDA and cuDNN f16
# from this call; the portable path also with the tile shader first (FT_VK_PORTABLE_FORM=tile), same process order.
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=590, command='bash bench/tune/session9_call3.sh')
# Table: bench/tune/vk_table.py vk.csv --peers peers_f16.log.
# Files: main.log checks.log conformance.log vk.csv vk_out.log peers_f16.log clocks.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "checks"
ck $B/sm90_check --no-bench --quick --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
conformance cuda vulkan
grep -o "vk_[a-z0-9_]*<[^>]*>" "$OUT/conformance.log" | sed 's/<.*//' | sort | uniq -c | head -20
step "vulkan table"
clocks_start
mark "table start"
FT_VK_TIMEOUT=240 FT_VK_DEADLINE=420 vk 1 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench --backend vulkan,cuda --dtype f16 --warmup-ms 1000 \
  --iters 10 --dim 64,128,256 --seq 1024,4096,16384 --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable,cuda_sm90
mark "portable tile"
FT_VK_TIMEOUT=90 FT_VK_DEADLINE=480 vk tile FT_VK_PORTABLE_FORM=tile $B/flashtile_bench --backend vulkan --dtype f16 \
  --warmup-ms 1000 --iters 10 --dim 64,128,256 --seq 1024,4096,16384 --path vulkan_portable
mark "table end"
kill "$clk" 2>/dev/null
timeout 60 python3 tests/cuda/sm90_peer.py --vk-cells --dtype f16 --cudnn-only > "$OUT/peers_f16.log" 2>&1
echo "peers f16 exit $?"
grep "pipeline stats attn_portable_rg\|pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-220 | sort | uniq | head -30
step done
