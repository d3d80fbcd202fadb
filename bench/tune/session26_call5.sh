#!/usr/bin/env bash
# Session 26's fifth call (~200 s; carry .bundle .bundle-pp256 .gl). .bundle: main at c1e374d.
# .bundle-pp256/sm90_check_pp256: tests/cuda/build_variants.sh .bundle-pp256 'pp256=-DFT_SM90_CFG256="2:80:2:2"' (d256
# in pingpong, every kernel of it: session 6 had +1..5% to 1k and an 8-byte spill in the causal kernel, which today's
# kernels no longer have).
# 1. pp256's checks, then d256's grid three times, land and pp256 interleaved (grid.log).
# 2. Head groups of other sizes for the two static-order causal cells at 512 (d256, d128: groups of 4 now; call 1's
#    trace had d256's CTAs end 20 us apart, 64-80 blocks each), three runs interleaved (pers.log).
# Files: main.log checks.log grid.log pers.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
checked_ab .bundle-pp256 3 pp256 --grid-d 256
step "head groups"
FT_BIN_land=.bundle/sm90_check
cell_runs 3 "256,512,1 128,512,1" "land" "land --head-group 2" "land --head-group 5" "land --head-group 8"
step done
