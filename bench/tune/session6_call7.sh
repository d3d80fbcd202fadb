#!/usr/bin/env bash
# Session 6, device call 7 (carry: build-var17; ~100 s, the last of the session's device time). Direct O stores 8
# (w8) or 16 (w16) bytes wide against 4 (head), d64 and d128 grids twice interleaved; the wide-store tile test and
# w8's checks first. No peers (a ratio to head only). Files: c.log grid.log.
# Build (repo root, ~2 min): rm -rf build-var17 && tests/cuda/build_variants.sh build-var17 'head='
#   'w8=-DFT_SM90_OSTORE=8' 'w16=-DFT_SM90_OSTORE=16' && rm -rf build-var17/obj &&
#   cmake --build build --target tile_tests && cp build/tests/cuda/tile_tests build-var17/
# Refused in session 6 (device time spent): run it next session, with peers if time allows.
set -u
B=build-var17
OUT=${OUT:-/tmp/out}
timeout 20 $B/tile_tests -tc='*wide*' 2>&1 | tail -3 >> "$OUT/c.log"
for m in 0 7; do timeout 20 $B/sm90_check_w8 --no-bench --quick --ctas $m 2>&1 | grep -v "^ok " | tail -2 >> "$OUT/c.log"; done
cat "$OUT/c.log"
for rep in 1 2; do for d in 128 64; do for v in head w8 w16; do
  echo "== $B/sm90_check_$v d$d" >> "$OUT/grid.log"
  timeout 15 $B/sm90_check_$v --bench-only --grid --grid-d $d >> "$OUT/grid.log" 2>&1
done; done; done
grep -c TFLOP "$OUT/grid.log"
