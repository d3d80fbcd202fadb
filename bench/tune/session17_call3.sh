#!/usr/bin/env bash
# Session 17, call 3 (~200 s; carry .bundle .bundle-v2 .gl): narrow first blocks in the d64/d128 causal short
# kernels only (call 2 had them in every kernel: d64 causal 512/1k +4.9/+2.5%, d128 causal 512 +2.1%, but the main
# kernels lost 3-6% from 4k to the code alone). ns16: widths in steps of 16 keys (call 2's); ns64: in steps of 64 (two
# paths, less code). Checks of both, then the d64 and d128 grids three times interleaved against the bundle's (main).
# run(carry=[".bundle", ".bundle-v2", ".gl"], timeout_s=400, command='bash bench/tune/session17_call3.sh')
# Analyse: bench/tune/ab_grid.py grid.log main. Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
for v in ns64 ns16; do ck .bundle-v2/sm90_check_$v --no-bench; done
san 150 racecheck .bundle-v2/sm90_check_ns64 --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log"
mkdir -p /tmp/s17 && cp "$FT_BUNDLE"/sm90_check /tmp/s17/sm90_check_main && cp .bundle-v2/sm90_check_ns* /tmp/s17/
step "d64/d128 A/B"
for rep in 1 2 3; do for d in 64 128; do for v in main ns64 ns16; do
  g /tmp/s17/sm90_check_$v --bench-only --grid --grid-d $d
done; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
