#!/usr/bin/env bash
# Session 32's first call (~420 s; carry .bundle .bundle-s32 .gl).
# Build: DIMS="64 128 256" tests/cuda/build_variants.sh .bundle-s32 'base=' 'wr=-DFT_SM90_WARP_RELEASE=1'
# 1. wr (Sm90Config::warp_release: each consumer warp releases a K/V stage with one arrival, lane 0's, instead of 32):
#    smoke, racecheck --tiny, the full sm90_check.
# 2. The whole grid three times, base and wr interleaved. Read: bench/tune/ab_grid.py grid.log base.
# 3. Energy at the power cap (bench/tune/sustained_probe.py, main's library in .bundle): ours, cuDNN and FA2 in the six
#    cells that missed FA2's 1.8x in session 31, about 0.5 s back to back each: J a launch against time a launch.
# Files: main.log checks.log grid.log probe.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-s32
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s32 wr
for v in $vs; do san 150 racecheck .bundle-s32/sm90_check_$v --tiny --no-bench; done
for v in $vs; do ck .bundle-s32/sm90_check_$v --no-bench; done
grep -E "^==|^exit|hazard|passed|FAIL" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2 3; do for v in base $vs; do g .bundle-s32/sm90_check_$v --bench-only --grid; done; done
step "energy probe"
export LD_LIBRARY_PATH=$PWD/.bundle FLASHTILE_LIBRARY=$PWD/.bundle/libflashtile.so
for cell in 64,512,0:3000 64,1024,0:1500 64,4096,0:400 128,512,1:4000 128,512,0:3000 256,512,1:4000; do
  echo "######## ${cell%%:*} n ${cell##*:}" >> "$OUT/probe.log"
  timeout 90 python3 bench/tune/sustained_probe.py --cell "${cell%%:*}" --n "${cell##*:}" >> "$OUT/probe.log" 2>&1
  echo "probe $cell exit $?"
done
grep -E "####|back-to-back|energy" "$OUT/probe.log"
step done
