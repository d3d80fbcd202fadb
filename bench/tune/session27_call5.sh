#!/usr/bin/env bash
# Session 27's fifth call (the last 250 s of the session's device time; carry .bundle .bundle-s28 .gl, built by
# bench/tune/session28_build.sh): a first look at d64's chained small kernel, non-causal (chain) only.
# 1. smoke, full sm90_check and racecheck --tiny of chain; 2. d64's grid twice, land and chain interleaved.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s28 chain
in_vs chain || { step "stopped"; exit 0; }
cp .bundle/sm90_check .bundle-s28/sm90_check_land
step "grid A/B d64"
for rep in 1 2; do for v in land chain; do g .bundle-s28/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step "checks"
ck .bundle-s28/sm90_check_chain --no-bench
san 60 racecheck .bundle-s28/sm90_check_chain --tiny --no-bench
grep -E "^==|passed|FAIL|^exit|hazard" "$OUT/checks.log" | tail -8
step done
