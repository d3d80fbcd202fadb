#!/usr/bin/env bash
# Session 10, fifth device call (~420 s): the library as it lands on main (the KHR path's register softmax on by
# default at d 64/128 where the device probe finds the layout). `flashtile info` (the probed layout), sm90_check
# quick, conformance on both backends and every path, issue 5's table (f16, d 64/128/256 x 1k/4k/16k x causal) with
# flashtile CUDA and cuDNN f16 from this call; then, if time is left, the KHR tile 8,64,1,1 (d 64/128; it fits 48 KB
# only without the score tile).
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=560, command='bash bench/tune/session10_call5.sh')
# Table: bench/tune/vk_table.py vk.csv --peers peers_f16.log (process 1).
# Files: main.log checks.log conformance.log vk.csv vk_out.log peers_f16.log clocks.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "info"
timeout 60 $B/flashtile info 2>&1 | grep -iE "coopmat_acc_layout|vulkan:0|cuda:0" | head -6
step "checks"
ck $B/sm90_check --no-bench --quick --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
conformance cuda vulkan
step "vulkan table"
clocks_start
mark "table start"
FT_VK_TIMEOUT=240 FT_VK_DEADLINE=400 vk 1 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench --backend vulkan,cuda --dtype f16 --warmup-ms 1000 \
  --iters 10 --dim 64,128,256 --seq 1024,4096,16384 --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable,cuda_sm90
mark "table end"
kill "$clk" 2>/dev/null
timeout 60 python3 tests/cuda/sm90_peer.py --vk-cells --dtype f16 --cudnn-only > "$OUT/peers_f16.log" 2>&1
echo "peers f16 exit $?"
FT_VK_TIMEOUT=50 FT_VK_DEADLINE=430 vk t8,64,1,1 FLASHTILE_VKCM_TILE=8,64,1,1 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench \
  --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 64,128 --seq 1024,4096,16384 --path vulkan_coopmat
grep "pipeline stats attn_coopmat " "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-220 | sort | uniq | head -30
step done
