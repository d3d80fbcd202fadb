#!/usr/bin/env bash
# Session 8, last device call (~540 s): the library at main (staged O on by default; the short-sequence kernel with
# per-consumer block ranges at d64; the portable Vulkan row-group shader). Every check of issue 4 on it, conformance
# on both backends through the API, the sm90 grid with peers, and issue 5's table with flashtile CUDA and cuDNN f16
# from this call; the portable path also in its previous form (FT_VK_PORTABLE_FORM=old), same process order.
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=590, command='bash bench/tune/session8_call4.sh')
# Tables: bench/tune/parse_grid.py grid.log; bench/tune/vk_table.py vk.csv --peers peers_f16.log.
# Files: main.log checks.log conformance.log grid.log vk.csv vk_out.log peers_f16.log clocks.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "checks"
ck $B/tile_tests
for ctas in 0 7 -1; do ck $B/sm90_check --no-bench --ctas $ctas; done
san 90 racecheck $B/sm90_check --tiny --no-bench --ctas 5
san 60 memcheck $B/sm90_check --tiny --no-bench --ctas -1
grep -E "^==|^exit|passed|FAIL|ERROR|hazard|SUMMARY|test cases" "$OUT/checks.log"
conformance cuda vulkan
grep -o "sm90_fwd<[^>]*>\|vk_[a-z0-9_]*<[^>]*>" "$OUT/conformance.log" | sed 's/<.*//' | sort | uniq -c | head -20
step "sm90 grid"
g $B/sm90_check --bench-only --grid
FT_PEERS_TIMEOUT=120 peers_grid
step "vulkan table"
clocks_start
mark "table start"
FT_VK_TIMEOUT=200 FT_VK_DEADLINE=470 vk 1 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench --backend vulkan,cuda --dtype f16 --warmup-ms 1000 \
  --iters 10 --dim 64,128,256 --seq 1024,4096,16384 --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable,cuda_sm90
mark "portable old"
FT_VK_TIMEOUT=90 FT_VK_DEADLINE=500 vk old FT_VK_PORTABLE_FORM=old $B/flashtile_bench --backend vulkan --dtype f16 \
  --warmup-ms 1000 --iters 10 --dim 64,128,256 --seq 1024,4096,16384 --path vulkan_portable
mark "table end"
kill "$clk" 2>/dev/null
timeout 60 python3 tests/cuda/sm90_peer.py --vk-cells --dtype f16 --cudnn-only > "$OUT/peers_f16.log" 2>&1
echo "peers f16 exit $?"
step done
