#!/usr/bin/env bash
# Builds session 20's first call (bench/tune/session20_first.sh), from main with nothing applied (~5 min on 2 cores;
# needs a configured build/: bash scripts/setup.sh build):
#   .bundle-s20/sm90_check_base  main's kernels (tests/cuda/build_variants.sh, from a worktree of HEAD);
#   .bundle-s20/sm90_check_wgu   branch wip/s20-uniform's first commit (ff982d1): unsigned ring positions and the
#                                warpgroup index through tile::warp_uniform;
#   .bundle-s20/sm90_check_wgt   main + bench/tune/session20_uniform.patch (the branch's head, 6a03631): wgu plus the
#                                dynamic scheduler's tile index through tile::warp_uniform;
#   .bundle                      the candidate library, wgt: the patch applied to this working tree and built in
#                                build/ (git checkout backends/cuda/attn/sm90_fwd.cuh backends/cuda/tile/base.cuh
#                                drops it again).
set -euo pipefail
root=$PWD
variant() {  # variant NAME COMMIT
  git worktree remove --force "/tmp/s20-$1" 2>/dev/null || true
  git worktree add -q --detach "/tmp/s20-$1" "$2"
  (cd "/tmp/s20-$1" && bash tests/cuda/build_variants.sh "$root/.bundle-s20" "$1=")
  git worktree remove --force "/tmp/s20-$1"
}
variant base HEAD
variant wgu ff982d1
git apply bench/tune/session20_uniform.patch
bash tests/cuda/build_variants.sh "$root/.bundle-s20" "wgt="
rm -rf "$root/.bundle-s20/obj"
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
ls -la .bundle-s20 .bundle/sm90_check
