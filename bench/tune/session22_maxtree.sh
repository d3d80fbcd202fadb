#!/usr/bin/env bash
# Session 22's third call (~250 s; build: tests/cuda/build_variants.sh .bundle-s22b 'tree=' 'lazy2=-DFT_SM90_LAZY=2',
# plus main's sm90_check as .bundle-s22b/sm90_check_main; carry .bundle-s22b .gl). Call 2's ablations priced the row
# maxima at +11% at d128 (no max, hence no rescale) against +1% for the row sums, both one FP32 op an element: the max
# costs as latency, between a block's S and its exponentials (a 22-deep FMNMX chain at 176 keys, then two shuffles).
#   tree:  the lane's part of a row reduced as a balanced tree (depth 6 at 176 keys), shuffles as before;
#   lazy2: tree, plus lazy rescaling in every head dim, checked on the lanes' parts of the maxima before any shuffle:
#          while no lane's max passes its row's reference by 2^8, one vote and the block exponentiates, no shuffles,
#          no corr, no O rescale (Sm90Softmax kLazy 2).
# sm90_check of both (spiky keys move the reference), racecheck --tiny of lazy2, then the whole grid three times
# interleaved against main's kernels, then the peers. Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s22b/sm90_check_lazy2 .bundle-s22b/sm90_check_tree
variant_checks .bundle-s22b lazy2 tree lazy2
ab3 .bundle-s22b main tree lazy2
step done
