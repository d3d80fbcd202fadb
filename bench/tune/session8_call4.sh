#!/usr/bin/env bash
# Planned second device call of session 8 (~520 s), once call 1 (session8_call1.sh) finds staged O clean under the
# sanitizers and faster: the library built with it on (.bundle-os, prebuilt from build-os, configured with
# -DCMAKE_CUDA_FLAGS=-DFT_SM90_OSTAGE=1; the same kernels as main with the #if in sm90_traits.hpp removed, which a
# cubin diff confirms). Every check of issue 4 on it, conformance on both backends through the API (the path names
# report ",ostage"), the sm90 grid with peers, and issue 5's table with flashtile CUDA and cuDNN f16 from this call.
# Rebuild first if main moved: cmake --build build-os && bash bench/make_bundle.sh build-os .bundle-os
# run(carry=[".bundle-os", ".gl"], timeout_s=580, command='bash bench/tune/session8_call2.sh')
# Tables: bench/tune/parse_grid.py grid.log; bench/tune/vk_table.py vk.csv --peers peers_f16.log.
# Files: main.log checks.log conformance.log grid.log vk.csv vk_out.log peers_f16.log clocks.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=${FT_BUNDLE:-.bundle}
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "checks"
ck $B/tile_tests
for ctas in 0 7 -1; do ck $B/sm90_check --no-bench --ctas $ctas; done
ck compute-sanitizer --error-exitcode 3 --tool racecheck $B/sm90_check --tiny --no-bench --ctas 5
ck compute-sanitizer --error-exitcode 3 --tool memcheck $B/sm90_check --tiny --no-bench --ctas -1
grep -E "^==|^exit|passed|FAIL|ERROR|hazard|SUMMARY|test cases" "$OUT/checks.log"
conformance cuda vulkan
grep -o "sm90_fwd<[^>]*>" "$OUT/conformance.log" | sort | uniq -c | head -20
step "sm90 grid"
g $B/sm90_check --bench-only --grid
FT_PEERS_TIMEOUT=120 peers_grid
step "vulkan table"
clocks_start
mark "table start"
FT_VK_TIMEOUT=200 FT_VK_DEADLINE=520 vk 1 $B/flashtile_bench --backend vulkan,cuda --dtype f16 --warmup-ms 1000 \
  --iters 10 --dim 64,128,256 --seq 1024,4096,16384 --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable,cuda_sm90
mark "table end"
kill "$clk" 2>/dev/null
timeout 90 python3 tests/cuda/sm90_peer.py --vk-cells --dtype f16 --cudnn-only > "$OUT/peers_f16.log" 2>&1
echo "peers f16 exit $?"
step done
