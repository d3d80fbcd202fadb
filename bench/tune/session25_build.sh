#!/usr/bin/env bash
# Builds session 25's first call (bench/tune/session25_first.sh) from main (~4 min on 2 cores; needs a configured
# build/: bash scripts/setup.sh build):
#   .bundle: main's library (d64's small kernel in 8 stages, session 24);
#   .bundle-s25/sm90_check_split: branch wip/s24-split-s with FT_SM90_SPLIT=256: S = Q·Kᵀ issued in two column
#     halves, a commit group each, and kLazy 3's exponentials of the first half run while the second half's wgmma
#     computes (Sm90Softmax::step_split). Where blocks are a multiple of 32 keys: d64 (every kernel), d128 causal and
#     its non-causal short kernel (128-key blocks), d256's short kernel (64-key blocks). Never run.
set -euo pipefail
rm -rf .bundle-s25 /tmp/s25split
git worktree add -f /tmp/s25split wip/s24-split-s
bash /tmp/s25split/tests/cuda/build_variants.sh "$PWD/.bundle-s25" 'split=-DFT_SM90_SPLIT=256'
git worktree remove --force /tmp/s25split
rm -rf .bundle-s25/obj
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
