#!/usr/bin/env bash
# Session 30's second call (~300 s; carry .bundle-s30b .gl). Built here by
#   DIMS=64 bash tests/cuda/build_variants.sh .bundle-s30b 'l4=-DFT_SM90_LAZY=4' \
#     'l4s4=-DFT_SM90_LAZY=4 -DFT_SM90_SMALL="64:2:4:64:8:4096"' 'l4sA=-DFT_SM90_LAZY=4 -DFT_SM90_SMALL="64:2:4:64:8:1073741824"'
# and .bundle-s30's sm90_check_base copied in as sm90_check ("land": main's d64 kernels, byte-identical).
# l4: call 1's lazy mode 4 at d64. l4s4 / l4sA: the same with d64's small kernel (four consumers, 64-key blocks) to
# 4096 keys / at every length, causal and not, where call 1 had it gain most (causal 512-2k +3.1..5.7%).
# 1. smoke, racecheck --tiny of l4s4, the full sm90_check of each (vary).
# 2. d64's grid three times, land, l4, l4s4, l4sA interleaved; the peers' d64 grid after.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-s30b
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s30b l4 l4s4 l4sA
in_vs l4s4 && san 150 racecheck .bundle-s30b/sm90_check_l4s4 --tiny --no-bench
vary .bundle-s30b 3 --grid-d 64
step "peers"
FT_PEERS_TIMEOUT=120 peers_grid --grid-d 64
step done
