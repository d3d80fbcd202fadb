#!/usr/bin/env bash
# Builds session 21's tail-split call (bench/tune/session21_split.sh) from branch wip/s21-tail-split (~3 min on 2
# cores; needs a configured build/): .bundle-s21t/sm90_check_{nosplit,split} (-DFT_SM90_TAIL_SPLIT=0: main's
# kernels; split: the branch's) and .bundle (the branch's library).
# Rejected (call 2: 8k/16k 0.973/0.991x); the code: session21_tail_split.patch (against e674b15).
set -euo pipefail
rm -rf .bundle-s21t
bash tests/cuda/build_variants.sh .bundle-s21t 'nosplit=-DFT_SM90_TAIL_SPLIT=0' 'split='
rm -rf .bundle-s21t/obj
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
