#!/usr/bin/env bash
# Session 26's fourth call (~200 s; carry .bundle .bundle-ch2 .gl). .bundle: main at c1e374d (call 2's bundle);
# .bundle-ch2/sm90_check_chain2: tests/cuda/build_variants.sh .bundle-ch2 'chain2=-DFT_SM90_SHORT_CHAIN=128' from branch
# wip/s26-chain (its second form: the chained Q·Kᵀ goes out after the last P·V's turn, once the next K landed, outside
# the turns; call 3's form waited for that K before the last P·V and lost 7% at 512). chain2's checks, then d128's
# grid three times, land and chain2 interleaved.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
checked_ab .bundle-ch2 3 chain2 --grid-d 128
step done
