#!/usr/bin/env bash
# One device run for the sm90 kernel family's timing grid. In order:
#  1. times the peer grid (sm90_check --grid: B = 16384/S, H = 2048/d, S 512..16384, d 64/128/256, causal or not;
#     the persistent and one-CTA-per-tile launches from the same binary) for sm90_check and each variant
#     sm90_check_NAME in the folder (an experiment branch's sm90_check, built there and renamed);
#  2. cuDNN + FA2 on the same cells (bench/tools/sm90_peer.py --grid);
#  3. in parallel (the host references are CPU-bound): the full correctness list for every binary, sm90_check also
#     with --ctas 7 (every CTA loops over many tiles) and --ctas -1 (one CTA per tile); compute-sanitizer memcheck on
#     the quick list with --ctas 5; tile_tests.
# Logs to $OUT (six files; the device tool brings back at most 8). Tables: bench/tools/grid_table.py grid.log,
# bench/tools/ab_grid.py grid.log BASE.
# Usage (on the device, repo root): bench/tools/device_run_sm90_grid.sh <dir with tile_tests, sm90_check[_NAME]>
set -u
B=${1:-build-sm90/dev}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/ck
date -u | tee "$OUT/gpu.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee -a "$OUT/gpu.txt"
bins=("$B/sm90_check")
for f in "$B"/sm90_check_*; do [ -x "$f" ] && bins+=("$f"); done
g() { echo "== $*" >> "$OUT/grid.log"; timeout 60 "$@" >> "$OUT/grid.log" 2>&1; echo "exit $?" >> "$OUT/grid.log"; }
for b in "${bins[@]}"; do g "$b" --bench-only --grid; done
grep -c "^bench" "$OUT/grid.log"; grep "^exit" "$OUT/grid.log"
echo "== peers"; PYTHONUNBUFFERED=1 timeout 90 python3 bench/tools/sm90_peer.py --grid > "$OUT/peers.log" 2>&1
echo "exit $?" >> "$OUT/peers.log"; grep -c "^peer" "$OUT/peers.log"; tail -2 "$OUT/peers.log"
c() { local n=$1; shift; (echo "== $*"; timeout 110 "$@" 2>&1; echo "exit $?") > "/tmp/ck/$n.log"; }
pids=()
c ctas7 "$B/sm90_check" --no-bench --ctas 7 & pids+=($!)
c pertile "$B/sm90_check" --no-bench --ctas -1 & pids+=($!)
for b in "${bins[@]}"; do c "$(basename "$b")" "$b" --no-bench & pids+=($!); done
(timeout 110 compute-sanitizer --tool memcheck "$B/sm90_check" --quick --no-bench --ctas 5 > "$OUT/memcheck.log" 2>&1
 echo "exit $?" >> "$OUT/memcheck.log") & pids+=($!)
(timeout 30 "$B/tile_tests" > "$OUT/tile_tests.log" 2>&1; echo "exit $?" >> "$OUT/tile_tests.log") & pids+=($!)
wait "${pids[@]}"
cat /tmp/ck/*.log > "$OUT/checks.log"
grep -v "^ok " "$OUT/checks.log"; echo "== memcheck"; tail -3 "$OUT/memcheck.log"; echo "== tile_tests"; tail -3 "$OUT/tile_tests.log"
date -u
