#!/usr/bin/env bash
# Session 26's third call (~200 s; carry .bundle .bundle-ch .gl). .bundle: main at c1e374d (call 2's bundle);
# .bundle-ch/sm90_check_chain: tests/cuda/build_variants.sh .bundle-ch 'chain=-DFT_SM90_SHORT_CHAIN=128' from branch
# wip/s26-chain (d128 non-causal's short kernel chains its tiles: the next tile's first Q·Kᵀ with this one's last
# P·V, under pingpong and the scheduler; call 1's trace had 30% of a 512-key tile outside its blocks).
# chain's checks (sm90_check, racecheck --tiny), then d128's grid three times, land and chain interleaved.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
checked_ab .bundle-ch 3 chain --grid-d 128
step done
