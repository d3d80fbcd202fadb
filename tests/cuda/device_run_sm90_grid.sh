#!/usr/bin/env bash
# One device call for the persistent sm90 kernel (Run 3). In order:
#  1. times the peer grid (sm90_check --grid: B = 16384/S, H = 2048/d, S 512..16384, d 64/128/256, causal or not;
#     persistent and one CTA per tile from the same binary) for sm90_check and the variants sm90_check_s1 (d256 only:
#     the only default it changes) and sm90_check_sh0 (run 2's shapes 0);
#  2. cuDNN + FA2 on the same cells (sm90_peer.py --grid);
#  3. in parallel (the host references are CPU-bound): the full correctness list for every binary, sm90_check also
#     with --ctas 7 (every CTA loops over many tiles) and --ctas -1 (one CTA per tile); compute-sanitizer memcheck on
#     the quick list with --ctas 5; tile_tests.
# Logs to $OUT (six files). Usage (on the device, repo root): tests/cuda/device_run_sm90_grid.sh <dir with binaries>
set -u
B=${1:-build-sm90x/dev}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/ck
date -u | tee "$OUT/gpu.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee -a "$OUT/gpu.txt"
g() { echo "== $*" >> "$OUT/grid.log"; timeout 60 "$@" >> "$OUT/grid.log" 2>&1; echo "exit $?" >> "$OUT/grid.log"; }
g "$B/sm90_check" --bench-only --grid
g "$B/sm90_check_s1" --bench-only --grid --grid-d 256
g "$B/sm90_check_sh0" --bench-only --grid
grep -c "^bench" "$OUT/grid.log"; grep "^exit" "$OUT/grid.log"
echo "== peers"; PYTHONUNBUFFERED=1 timeout 90 python3 tests/cuda/sm90_peer.py --grid > "$OUT/peers.log" 2>&1
echo "exit $?" >> "$OUT/peers.log"; grep -c "^peer" "$OUT/peers.log"; tail -2 "$OUT/peers.log"
c() { local n=$1; shift; (echo "== $*"; timeout 110 "$@" 2>&1; echo "exit $?") > "/tmp/ck/$n.log"; }
c default "$B/sm90_check" --no-bench &
c ctas7 "$B/sm90_check" --no-bench --ctas 7 &
c pertile "$B/sm90_check" --no-bench --ctas -1 &
c s1 "$B/sm90_check_s1" --no-bench &
c sh0 "$B/sm90_check_sh0" --no-bench &
(timeout 110 compute-sanitizer --tool memcheck "$B/sm90_check" --quick --no-bench --ctas 5 > "$OUT/memcheck.log" 2>&1
 echo "exit $?" >> "$OUT/memcheck.log") &
(timeout 30 "$B/tile_tests" > "$OUT/tile_tests.log" 2>&1; echo "exit $?" >> "$OUT/tile_tests.log") &
wait
cat /tmp/ck/default.log /tmp/ck/ctas7.log /tmp/ck/pertile.log /tmp/ck/s1.log /tmp/ck/sh0.log > "$OUT/checks.log"
grep -v "^ok " "$OUT/checks.log"; echo "== memcheck"; tail -3 "$OUT/memcheck.log"; echo "== tile_tests"; tail -3 "$OUT/tile_tests.log"
date -u
