#!/usr/bin/env bash
# Builds session 20's first call (bench/tune/session20_first.sh), from main with nothing applied (~4 min on 2 cores):
#   .bundle-s20/sm90_check_base  main's kernels (tests/cuda/build_variants.sh, from a worktree of HEAD);
#   .bundle-s20/sm90_check_wgu   main + bench/tune/session20_uniform.patch (branch wip/s20-uniform): unsigned ring
#                                positions and a warp-uniform warpgroup index (tile::warp_uniform);
#   .bundle                      the candidate library: main + the patch, applied to this working tree and built in
#                                build/ (configured: bash scripts/setup.sh build; git checkout the two files to drop
#                                it again).
set -euo pipefail
root=$PWD
git worktree remove --force /tmp/s20-base 2>/dev/null || true
git worktree add -q --detach /tmp/s20-base HEAD
(cd /tmp/s20-base && bash tests/cuda/build_variants.sh "$root/.bundle-s20" "base=")
git worktree remove --force /tmp/s20-base
git apply bench/tune/session20_uniform.patch
bash tests/cuda/build_variants.sh "$root/.bundle-s20" "wgu="
rm -rf "$root/.bundle-s20/obj"
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
ls -la .bundle-s20 .bundle/sm90_check
