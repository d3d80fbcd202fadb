#!/usr/bin/env bash
# Session 15, call 9 (ran from branch wip/s16-d64c at 5cd1bcf: main lacks its FT_SM90_SHORT64C; carry .bundle-s16 and
# .gl; nothing to build): d64 causal after Q prefetch.
#  - s4k: the short kernel (own blocks, Q prefetch, persistent) to 4k keys (FT_SM90_SHORT64C=4096), where 2k/4k ran
#    one CTA per tile of the main kernel;
#  - c2 / c2pp: 128-row tiles (two consumers; schedule 1 / pingpong), cuDNN's shape: no skipped blocks, which ncu
#    (call 8) found the top stall of our 192-row tiles. Two consumers lost in session 6, before Q prefetch.
# d64's grid (persist and pertile columns both), twice interleaved against base (main).
# run(carry=[".bundle-s16", ".gl"], timeout_s=300, command='bash bench/tune/session15_d64c.sh')
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-s16
step "checks"
for v in s4k c2 c2pp; do ck $B/sm90_check_$v --no-bench; done
grep -E "^==|^exit|passed|FAIL" "$OUT/checks.log"
step "grid"
for rep in 1 2; do for v in base s4k c2 c2pp; do g $B/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step done
