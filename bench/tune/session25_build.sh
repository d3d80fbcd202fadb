#!/usr/bin/env bash
# (Ran at a021e1c, session 25 call 1; FT_SM90_PERS64C and FT_SM90_SHORT64C were removed after it: build that commit.)
# Builds session 25's first call (bench/tune/session25_first.sh) from main (~5 min on 2 cores; needs a configured
# build/: bash scripts/setup.sh build):
#   .bundle: main's library (d64's small kernel, session 24), whose sm90_check has ten cases never run;
#   .bundle-s25/sm90_check_pers64c: d64 causal launches persistent with the dynamic scheduler (main kernel) to 16k
#     keys (FT_SM90_PERS64C); session 19 had them lose at 8k (396 vs 448 TFLOP/s), before the scheduler's 32 MB head
#     groups and lazy rescaling;
#   .bundle-s25/sm90_check_short64c: d64 causal's short kernel (own blocks, shifted rows, Q prefetch, narrow first
#     blocks), persistent, to 16k keys (FT_SM90_SHORT64C). d64 causal 8k (1.69-1.70x FA2) is the one long cell
#     that always misses FA2's 1.8x; 4k (the short kernel) and 16k read 495-514 TFLOP/s, 8k 486.
set -euo pipefail
rm -rf .bundle-s25
bash tests/cuda/build_variants.sh .bundle-s25 'pers64c=-DFT_SM90_PERS64C=16384' 'short64c=-DFT_SM90_SHORT64C=16384'
rm -rf .bundle-s25/obj
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
