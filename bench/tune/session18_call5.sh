#!/usr/bin/env bash
# Session 18 call 5 (~200 s; carry .bundle .bundle-nap .gl). The producer thread's waits on empty barriers with a
# sleep after each failed try (-DFT_SM90_NAP=32 / 200 ns; base: the same source without), built on the session's
# candidate: tests/cuda/build_variants.sh .bundle-nap 'base=' 'nap32=-DFT_SM90_NAP=32' 'nap200=-DFT_SM90_NAP=200'.
# Call 4's ncu had the producer's polling at 2.2M of d64 causal 512's 3.0M try_waits (cuDNN: 0.28M in all).
# The whole grid twice interleaved, d64/d128 to 4k a third time. Analyse: bench/tune/ab_grid.py grid.log base.
# Files: main.log checks.log grid.log.
# After the call: FT_SM90_NAP and tile::wait_nap were removed (no gain).
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
variant_checks .bundle-nap nap200 nap32 nap200  # (the same steps as the call ran, now a helper)
ab .bundle-nap base nap32 nap200
step "third run"
for d in 64 128; do for v in base nap32 nap200; do g .bundle-nap/sm90_check_$v --bench-only --grid --grid-d $d --grid-smax 4096; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
