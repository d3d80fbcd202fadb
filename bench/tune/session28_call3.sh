#!/usr/bin/env bash
# Session 28's third call (~150 s; carry .bundle .gl): d64's grid cells alone (call 2) ran 8k at 553-561 TFLOP/s,
# 16k at 565-569, while in the grid 8k reads 519-536 and 16k 559-564. Is the grid's 100 ms warm-up short of the
# power limiter's settled state at some cells? d64's grid (ours, then the peers) at --warm-ms 100, the same at 1500,
# ours at 100 again; SM clock, instant power, temperature and clock-event reasons sampled every 50 ms, every output
# line timestamped (bench/tune/power_trace.py reads them together).
# Files: main.log grid.log clocks.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=150
. "$(dirname "$0")/device_env.sh"
q=timestamp,clocks.sm,power.draw.instant,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$q --format=csv,noheader >/dev/null 2>&1 || q=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active
echo "query $q"
nvidia-smi --query-gpu=$q --format=csv,noheader -lms 50 >> "$OUT/clocks.log" 2>&1 &
clk=$!
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date -u +%H:%M:%S.%N | cut -c1-12)" "$l"; done; }
run_ours() { echo "== ours warm $1" >> "$OUT/grid.log"; timeout 150 .bundle/sm90_check --bench-only --grid --grid-d 64 --warm-ms "$1" 2>&1 | stamp >> "$OUT/grid.log"; }
run_peers() { echo "== peers warm $1" >> "$OUT/grid.log"; timeout 150 python3 tests/cuda/sm90_peer.py --grid --grid-d 64 --warm-ms "$1" 2>&1 | stamp >> "$OUT/grid.log"; }
step "warm 100"; run_ours 100; run_peers 100
step "warm 1500"; run_ours 1500; run_peers 1500
step "warm 100 again"; run_ours 100
kill "$clk" 2>/dev/null
grep -c . "$OUT/clocks.log"; head -2 "$OUT/clocks.log"
step done
