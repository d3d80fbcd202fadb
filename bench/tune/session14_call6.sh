#!/usr/bin/env bash
# Session 14 call 6 (~70 s; carry .bundle-v14 and .gl): three K/V stages for d128 causal (FT_SM90_CFG128C: the causal
# entry alone; 226 KB of shared memory), as cuDNN's d128 causal 512 kernel has (232 KB), so more of a short tile's
# K/V is in flight from its start: s3 = "2:128:3:2" (pingpong), s3n = "2:128:3:1", against land, the d128 grid twice
# interleaved (its non-causal kernels are land's: a control). The grid times persistent and per-tile launches alike.
# run(carry=[".bundle-v14", ".gl"], timeout_s=200, command='bash bench/tune/session14_call6.sh')
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-v14
step "checks"
for v in s3 s3n; do ck $B/sm90_check_$v --no-bench --quick; done
grep -E "^==|^exit|passed|FAIL" "$OUT/checks.log"
step "grid A/B, d128"
for rep in 1 2; do for v in land s3 s3n; do g $B/sm90_check_$v --bench-only --grid --grid-d 128; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
