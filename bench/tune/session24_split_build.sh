#!/usr/bin/env bash
# Builds the S-in-halves A/B (bench/tune/session24_split_full.sh; session 24 call 7 took a first look) from main
# (~4 min on 2 cores; needs a configured build/: bash scripts/setup.sh build):
#   .bundle: main's library (d64's small kernel in 8 stages, session 24);
#   .bundle-split/sm90_check_split: branch wip/s24-split-s with FT_SM90_SPLIT=256: S = Q·Kᵀ issued in two column
#     halves, a commit group each, and kLazy 3's exponentials of the first half run while the second half's wgmma
#     computes (Sm90Softmax::step_split). Where blocks are a multiple of 32 keys: d64 (every kernel), d128 causal and
#     its non-causal short kernel (128-key blocks), d256's short kernel (64-key blocks). Call 7: correct, level
#     with 128-key blocks, -3..4% in d64's small kernel (32-key halves).
set -euo pipefail
rm -rf .bundle-split /tmp/splitwt
git worktree add -f /tmp/splitwt wip/s24-split-s
bash /tmp/splitwt/tests/cuda/build_variants.sh "$PWD/.bundle-split" 'split=-DFT_SM90_SPLIT=256'
git worktree remove --force /tmp/splitwt
rm -rf .bundle-split/obj
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
