#!/usr/bin/env bash
# Builds session 23's first call (bench/tune/session23_sum.sh) from branch wip/s22-sumsafe (~4 min on 2 cores; needs a
# configured build/: bash scripts/setup.sh build):
#   .bundle: the branch's library, lazy rescaling mode 3 at d128/d256 (no row maxima once every row has a reference,
#     checked on the row sums of P; a block that overflows P has its S recomputed by mma.sync), mode 2 at d64;
#   .bundle-s23/sm90_check_main: main's kernels (a worktree of main, f9822ae or later: mode 2 everywhere);
#   .bundle-s23/sm90_check_sum64: the branch with -DFT_SM90_LAZY=3, mode 3 at d64 too (spills 20-24 bytes there, so
#     the library leaves d64 at mode 2; this prices it).
set -euo pipefail
rm -rf .bundle-s23 /tmp/s23main
git worktree add -f /tmp/s23main main
bash /tmp/s23main/tests/cuda/build_variants.sh "$PWD/.bundle-s23" 'main='
git worktree remove --force /tmp/s23main
bash tests/cuda/build_variants.sh .bundle-s23 'sum64=-DFT_SM90_LAZY=3'
rm -rf .bundle-s23/obj
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
