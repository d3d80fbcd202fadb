#!/usr/bin/env bash
# Session 32's second call (~560 s; carry .bundle .bundle-s32 .bundle-s32b .gl).
# .bundle: the library with the stream's scheduler counter (sm90_stream_counter: no memset between launches, each
# launch's last CTA zeroes the pair) built from the working tree (cmake --build build -j2 && bash bench/make_bundle.sh
# build .bundle). .bundle-s32/sm90_check_base: main's kernels and launch layer (session32_first.sh's build).
# .bundle-s32b: DIMS="64 128 256" tests/cuda/build_variants.sh .bundle-s32b 'sr=' 'srwr=-DFT_SM90_WARP_RELEASE=1'.
# 1. library_checks of .bundle (sm90_check with the streams-and-graph cases), and srwr's sm90_check.
# 2. Three rounds: base, sr, srwr, then the peers (issue 4's table on sr: issue4_table.py grid.log sr; the A/B:
#    ab_grid.py grid.log base).
# 3. The launch gaps (bench/tune/sustained_probe.py, .bundle) in the dynamic cells of 512 and 1k keys.
# Files: main.log checks.log conformance.log grid.log probe.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
library_checks
ck .bundle-s32b/sm90_check_srwr --no-bench
grep -E "^==|^exit|passed|FAIL|streams" "$OUT/checks.log" | tail -12
mkdir -p /tmp/v && cp .bundle-s32/sm90_check_base /tmp/v/ && cp .bundle-s32b/sm90_check_sr .bundle-s32b/sm90_check_srwr /tmp/v/
for rep in 1 2 3; do
  step "grid round $rep"
  for v in base sr srwr; do g /tmp/v/sm90_check_$v --bench-only --grid; done
  FT_PEERS_TIMEOUT=150 peers_grid
done
step "probe"
export FLASHTILE_LIBRARY=$PWD/.bundle/libflashtile.so
for cell in 64,512,0:3000 128,512,0:3000; do
  echo "######## ${cell%%:*} n ${cell##*:}" >> "$OUT/probe.log"
  timeout 90 python3 bench/tune/sustained_probe.py --cell "${cell%%:*}" --n "${cell##*:}" >> "$OUT/probe.log" 2>&1
  echo "probe $cell exit $?"
done
grep -E "####|back-to-back k" "$OUT/probe.log"
step done
