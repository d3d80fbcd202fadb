#!/usr/bin/env bash
# Session 22's sixth call (~220 s; build: tests/cuda/build_variants.sh .bundle-s22c 'spec=-DFT_SM90_LAZY=3', plus
# main's sm90_check as landed (f9822ae) as .bundle-s22c/sm90_check_land; carry .bundle-s22c .gl). Prices what is
# left of the row max's cost after mode 2: spec (kLazy 3, measurement only) exponentiates against the reference
# before the lane tree and vote resolve, and after a move scales P by corr. Wrong only where a block passes a row's
# reference by 2^128 (P overflows and S is gone), so the checks should pass. sm90_check of spec, racecheck --tiny,
# then the whole grid twice interleaved against land. No peers (an A/B of our own kernels). Files: main.log checks.log
# grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s22c/sm90_check_spec
variant_checks .bundle-s22c spec spec
ab .bundle-s22c land spec
step done
