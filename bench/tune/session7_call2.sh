#!/usr/bin/env bash
# Prepared second device call of session 7 (~180 s): causal launches persistent with the dynamic scheduler (cdyn:
# -DFT_SM90_CAUSAL_DYNAMIC=1 from bench/tune/session7_experiments.patch, d64 and d128; tiles taken longest first
# from the launch's counter, tiles without keys skipped by the producer and written by the consumers' pre-pass).
# Causal d128/d256 now launch one CTA per tile at every length, paying each CTA's start and its epilogue's tail;
# cuDNN runs 132 persistent CTAs. d256 causal spills 64 bytes with it, so it stays out.
# Build: cdyn is in build-var18 (session7_call1.sh's header; add 'cdyn=-DFT_SM90_CAUSAL_DYNAMIC=1').
# run(carry=[".bundle", ".gl", "build-var18"], timeout_s=590, command='bash bench/tune/session7_call2.sh')
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
B=build-var18
. "$(dirname "$0")/device_env.sh"
step "checks"
for ctas in 0 7 -1; do ck $B/sm90_check_cdyn --no-bench --ctas $ctas; done
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
ab $B head cdyn
FT_PEERS_TIMEOUT=120 peers_grid
# ostage's racecheck ran past ck's 150 s in call 1 (its plain checks passed on every launch mode): longer here, last.
step "racecheck"
echo "== racecheck ostage" >> "$OUT/checks.log"
timeout 300 compute-sanitizer --tool racecheck $B/sm90_check_ostage --quick --no-bench --ctas 5 2>&1 | grep -v "^ok " | tail -12 >> "$OUT/checks.log"
echo "exit ${PIPESTATUS[0]}" >> "$OUT/checks.log"
[ $(( $(date +%s) - t0 )) -lt 400 ] && ck compute-sanitizer --tool racecheck $B/sm90_check_cdyn --quick --no-bench --ctas 5
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
step done
