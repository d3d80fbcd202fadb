#!/usr/bin/env bash
# Session 4, device call 5 (carry: .bundle .gl): the library as committed after calls 1-4. SM clock sampled all call
# long (clocks.csv) to test whether the Vulkan "slow mode" is the GPU's idle clock (345 MHz; slow/fast ratios 4.3-5.6x
# in call 2, portable 4.4 vs 24.6 TFLOP/s).
# 1. CUDA: tile_tests, sm90_check on every launch mode, racecheck/memcheck, the conformance suite on both CUDA paths.
# 2. sm90 grid with cuDNN and FA2 in the same call.
# 3. Vulkan: conformance on every path (new coopmat2 defaults), the f16 table (1 s warm-ups) with flashtile's CUDA path
#    on the same cells, then the table again in a second process while time allows.
# Files: main.log checks.log tile.log conformance.log grid.log vk_table.csv vk_table.log clocks.csv (as run; now clocks.log).
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
clocks_start  # ran with its own sampler: every 500 ms into clocks.csv, truncating (the markers were lost)
step "cuda correctness"
timeout 60 .bundle/tile_tests > "$OUT/tile.log" 2>&1; echo "tile_tests exit $?"; tail -3 "$OUT/tile.log"
for ctas in 0 7 -1; do ck .bundle/sm90_check --no-bench --ctas $ctas; done
ck compute-sanitizer --tool racecheck .bundle/sm90_check --quick --no-bench --ctas 5
ck compute-sanitizer --tool memcheck .bundle/sm90_check --quick --no-bench --ctas -1
grep -E "^==|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
timeout 120 .bundle/flashtile_tests --ft-backend=cuda -tc='conformance*' > "$OUT/conformance.log" 2>&1
echo "cuda conformance exit $?"
step "grid"
g .bundle/sm90_check --bench-only --grid
FT_PEERS_TIMEOUT=120 peers_grid
step "vulkan conformance"
timeout 150 .bundle/flashtile_tests --ft-backend=vulkan -tc='conformance*' >> "$OUT/conformance.log" 2>&1
echo "vulkan conformance exit $?"; grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
table() {  # table TAG: one bench process over the issue's cells, appended to vk_table.csv / vk_table.log
  mark "table $1 start"
  echo "# $1" >> "$OUT/vk_table.csv"
  timeout 200 .bundle/flashtile_bench --backend vulkan,cuda --dtype f16 --warmup-ms 1000 --iters 10 --dim 64,128,256 \
    --seq 1024,4096,16384 --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable,cuda_sm90 --csv /tmp/t.csv \
    >> "$OUT/vk_table.log" 2>&1
  echo "table $1 exit $?"; cat /tmp/t.csv >> "$OUT/vk_table.csv"; mark "table $1 end"
}
step "tables"
table 1
if [ $(( $(date +%s) - t0 )) -lt 400 ]; then table 2; fi
kill "$clk" 2>/dev/null
step done
