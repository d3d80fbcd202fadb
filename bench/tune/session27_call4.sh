#!/usr/bin/env bash
# Session 27's fourth call (~200 s; carry .bundle-cand2 .bundle-c3 .gl). .bundle-cand2: main with d64 causal's small
# kernel to 2048 keys (was 1024) and sm90_check's new cases (both sides of that limit; d64 non-causal past 4096
# keys). .bundle-c3/sm90_check_old: main before (729ba37's kernels).
# 1. library_checks of .bundle-cand2.
# 2. d64's grid four times, old and cand2 interleaved; the peers' whole grid.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-cand2
. "$(dirname "$0")/device_env.sh"
library_checks
cp .bundle-cand2/sm90_check .bundle-c3/sm90_check_cand2
step "grid A/B d64"
for rep in 1 2 3 4; do for v in old cand2; do g .bundle-c3/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step "peers"
FT_PEERS_TIMEOUT=120 peers_grid
step done
