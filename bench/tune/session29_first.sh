#!/usr/bin/env bash
# Session 29's first call (~300 s; carry .bundle-s29 .gl; bench/tune/session29_build.sh builds it).
# 1. smoke of g2 and g2x, racecheck --tiny of each, their full sm90_check (the small kernel's cases run in groups).
# 2. d64's grid three times, land and the variants interleaved; the peers' d64 grid after.
# What to read: bench/tune/ab_grid.py grid.log land. The small kernel runs d64 non-causal to 1k and causal to 2k (g2x:
# both to 4k); session 26's trace put 16-22% of a tile at 512 into its epilogue, first S and Q wait, all four
# consumers at once: in two groups, one group's tile start runs under the other's blocks.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-s29
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s29 g2 g2x
for v in $vs; do san 150 racecheck .bundle-s29/sm90_check_$v --tiny --no-bench; done
vary .bundle-s29 3 --grid-d 64
step "peers"
FT_PEERS_TIMEOUT=120 peers_grid --grid-d 64
step done
