#!/usr/bin/env bash
# Session 27's first call (~300 s; carry .bundle .bundle-c1). .bundle: main with the S-pipe code off (kernels
# byte-identical to 729ba37's). .bundle-c1: d64 variants, built on 729ba37 with bench/tune/session27_spipe.patch
# applied, as `DIMS=64 tests/cuda/build_variants.sh .bundle-c1 'v1a=FLAGS' ...` builds them (objects removed):
#   v1a  the small kernel at every length, 3 consumers, 64-key blocks, 8 stages, S double-buffered
#        (-DFT_SM90_SMALL="64:2:3:64:8:1073741824" -DFT_SM90_SPIPE="64:2:4")
#   v0   the same without the S pipe (session 24 call 1 measured this shape at 0.88-0.91x)
#   v1c  2 consumers, 64-key blocks, S pipe (-DFT_SM90_SMALL="64:2:2:64:8:1073741824" -DFT_SM90_SPIPE="64:2:4")
#   v2c  v1c with Q in registers (-DFT_SM90_SPIPE="64:2:4:4")
#   v3q  v0 with Q in registers (-DFT_SM90_SPIPE="64:2:0:4")
# 1. smoke of each, full sm90_check of those that pass, racecheck --tiny of v1a and v2c.
# 2. d64's grid three times, land and the variants interleaved; then the peers' whole grid.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-c1 v1a v0 v1c v2c v3q
step "checks"
for v in $vs; do ck .bundle-c1/sm90_check_$v --no-bench; done
for v in v1a v2c; do in_vs $v && san 150 racecheck .bundle-c1/sm90_check_$v --tiny --no-bench; done
grep -E "^==|passed|FAIL|^exit|hazard" "$OUT/checks.log" | tail -24
cp .bundle/sm90_check .bundle-c1/sm90_check_land
step "grid A/B d64"
for rep in 1 2 3; do for v in land $vs; do g .bundle-c1/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step "peers"
FT_PEERS_TIMEOUT=120 peers_grid
step done
