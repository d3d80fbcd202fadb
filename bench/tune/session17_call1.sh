#!/usr/bin/env bash
# Session 17, call 1 (~330 s; carry .bundle .bundle-n64c .gl): issue 4's same-call table with the landed kernels
# (session16_first.sh's steps), then session17_n64c.sh's d64 A/B: the d64 causal short kernel with 64-key blocks
# (FT_SM90_SHORT_N64C=64) against the landed one, d64's grid three times interleaved.
# run(carry=[".bundle", ".bundle-n64c", ".gl"], timeout_s=480, command='bash bench/tune/session17_call1.sh')
# Analyse: bench/tune/parse_grid.py grid.log (the table), bench/tune/ab_grid.py grid.log main (n64c).
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
ck .bundle-n64c/sm90_check_n64c --no-bench
san 150 racecheck .bundle-n64c/sm90_check_n64c --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log" | tail -6
conformance cuda
mkdir -p /tmp/s17 && cp "$FT_BUNDLE"/sm90_check /tmp/s17/sm90_check_main && cp .bundle-n64c/sm90_check_n64c /tmp/s17/
ab /tmp/s17 main
FT_PEERS_TIMEOUT=100 peers_grid
step "d64 A/B"
for rep in 1 2 3; do for v in main n64c; do g /tmp/s17/sm90_check_$v --bench-only --grid --grid-d 64; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
