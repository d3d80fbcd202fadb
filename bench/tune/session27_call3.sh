#!/usr/bin/env bash
# Session 27's third call (~250 s; carry .bundle-final .bundle-c3 .gl). .bundle-final: main's kernels (729ba37) with
# sm90_check's new cases (d64 non-causal past 4096 keys). .bundle-c3: sm90_check_old (call 2's .bundle) and sm4k, d64's
# small kernel to 4096 keys (-DFT_SM90_SMALL="64:2:4:64:8:4096"; session 24 call 2 had it 2-5% behind from 2k).
# 1. library_checks of .bundle-final.
# 2. sm4k's check, then d64's grid three times, old and sm4k interleaved; the peers' whole grid.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-final
. "$(dirname "$0")/device_env.sh"
library_checks
step "sm4k"
ck .bundle-c3/sm90_check_sm4k --no-bench
grep -E "^==|passed|FAIL|^exit" "$OUT/checks.log" | tail -3
step "grid A/B d64"
for rep in 1 2 3; do for v in old sm4k; do g .bundle-c3/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step "peers"
FT_PEERS_TIMEOUT=120 peers_grid
step done
