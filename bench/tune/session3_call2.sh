#!/usr/bin/env bash
# Session 3, device call 2 (carry: .bundle .gl build-var4). Timing: sm90 base vs polynomial exp2 on a share of the
# softmax (FT_SM90_POLY=4: every 4th pair, 8: every 8th) on the whole grid, cuDNN/FA2 in the same call; ncu source
# counters of base at d128 S=512; KHR coopmat d64 tiles on all six cells; coopmat2's slow mode (same cell, separate
# processes). Correctness: the poly variants' sm90_check, tile_tests (poly_exp2 test). Logs go to $OUT directly.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=80
. "$(dirname "$0")/device_env.sh"
V=build-var4
step "cuda correctness of the variants (quick)"
for v in poly4 poly8; do timeout 60 $V/sm90_check_$v --no-bench 2>&1 | grep -v "^ok " | tail -3 | sed "s/^/$v: /" | tee -a "$OUT/checks.log"; done
timeout 60 .bundle/tile_tests 2>&1 | tail -4 | tee -a "$OUT/checks.log"
step "cuda grid"
g $V/sm90_check_base --bench-only --grid
g $V/sm90_check_poly4 --bench-only --grid
g $V/sm90_check_poly8 --bench-only --grid --grid-d 64
FT_PEERS_TIMEOUT=100 peers_grid
step "vulkan (1 s warm-ups)"
B=.bundle/flashtile_bench
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 --no-grid"
for t in 4,32,1,1 8,32,1,1 4,64,1,1; do
  vk "khr_d64_$t" FLASHTILE_VKCM_TILE=$t $B $common --path vulkan_coopmat $(cells 64 "1024 4096 16384" "0 1")
done
for i in 1 2 3; do vk "cm2_d256_1k_proc$i" FT_BENCH_TIMES=1 $B $common --path vulkan_coopmat2 $(cells 256 1024 0); done
vk cm2_d256_4k_1k FT_BENCH_TIMES=1 $B $common --path vulkan_coopmat2 $(cells 256 "4096 1024" 0)
step "ncu (source counters, d128 S=512)"
timeout 90 ncu --clock-control none --launch-skip 4 --launch-count 1 --section SourceCounters --section WarpStateStats \
  --section SpeedOfLight -o /tmp/prof --kernel-name regex:sm90_fwd $V/sm90_check_base --bench-only --cell 128,512,0 > "$OUT/ncu.log" 2>&1
timeout 60 ncu -i /tmp/prof.ncu-rep --page details >> "$OUT/ncu.log" 2>&1
timeout 60 ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > "$OUT/sass.csv" 2>&1; echo "sass exit $?"
ls -la "$OUT"
step done
