#!/usr/bin/env bash
# Session 28's first call (~250 s; carry .bundle .bundle-s28 .gl; bench/tune/session28_build.sh builds both).
# 1. smoke of chain and chainc, racecheck --tiny, their full sm90_check (the small kernel's cases run chained).
# 2. d64's grid three times, land (.bundle's sm90_check) and the variants interleaved; the peers' whole grid.
# What to read: bench/tune/ab_grid.py grid.log land. The cells that matter are d64 at 512/1k (the small kernel);
# session 26's trace put 18/9% of a tile there (512/1k) into its epilogue, first S and Q wait.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s28 chain chainc
for v in $vs; do san 150 racecheck .bundle-s28/sm90_check_$v --tiny --no-bench; done
vary .bundle-s28 3 --grid-d 64
step "peers"
FT_PEERS_TIMEOUT=120 peers_grid
step done
