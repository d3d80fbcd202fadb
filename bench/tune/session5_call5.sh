#!/usr/bin/env bash
# Session 5, device call 5 (carry: .bundle .gl build-var10). Call 4: zeroing O per tile with every P·V accumulating
# (6ec0cab's form; variant "zero") beat HEAD ("base", the first P·V overwrites O) with one CTA per tile (d128 1k
# non-causal 448 vs 419, 16k 615 vs 612) but lost on the persistent launch (477 vs 487, 608 vs 625). One CTA per tile
# is the dispatched launch for causal d128 >= 1k, d256 and causal d64 >= 2k: the whole grid, both variants twice
# interleaved, cuDNN/FA2 in the same call, after zero's correctness on every launch mode.
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
for ctas in 0 -1 7; do ck build-var10/sm90_check_zero --no-bench --ctas $ctas; done
grep -E "^==|^exit|passed|FAIL" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2; do
  for v in base zero; do g build-var10/sm90_check_$v --bench-only --grid; done
done
FT_PEERS_TIMEOUT=120 peers_grid
step done
