#!/usr/bin/env bash
# Builds session 24's first call (bench/tune/session24_first.sh) from main (~5 min on 2 cores; needs a configured
# build/: bash scripts/setup.sh build):
#   .bundle: main's library (lazy rescaling mode 3, session 23);
#   .bundle-s24/sm90_check_bn64s6, _bn64s8: d64 with 64-key blocks (FT_SM90_CFG64 "3:64:6:1", "3:64:8:1"), 6 or 8
#     stages. Session 23 call 8's ncu found the MUFU and the tensor cores each about 60% busy at d64 non-causal 4k:
#     smaller blocks interleave one consumer's exponentials with the others' GEMMs at a finer grain (the per-block
#     barriers and vote cost more often). They affect d64 non-causal (the short kernel) and d64 causal past 4k (the
#     main kernel); d64 causal to 4k keeps the short kernel's own block (FT_SM90_SHORT_N64C).
#   .bundle-s24/sm90_check_rot3: branch wip/s23-rot3 (pingpong turns in a ring) with d64's three consumers taking
#     turns (FT_SM90_CFG64 "3:128:4:2"; pingpong turns own blocks and shifted rows off). Its other head dims run the
#     branch's ring code with two consumers, which must match main's.
set -euo pipefail
rm -rf .bundle-s24 /tmp/s24rot3
bash tests/cuda/build_variants.sh .bundle-s24 'bn64s6=-DFT_SM90_CFG64="3:64:6:1"' 'bn64s8=-DFT_SM90_CFG64="3:64:8:1"'
git worktree add -f /tmp/s24rot3 wip/s23-rot3
bash /tmp/s24rot3/tests/cuda/build_variants.sh "$PWD/.bundle-s24" 'rot3=-DFT_SM90_CFG64="3:128:4:2"'
git worktree remove --force /tmp/s24rot3
rm -rf .bundle-s24/obj
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
