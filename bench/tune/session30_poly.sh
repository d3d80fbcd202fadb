#!/usr/bin/env bash
# Session 30 call 6 (~280 s; carry .bundle-s30d .gl). Built here by
#   DIMS=64 bash tests/cuda/build_variants.sh .bundle-s30d 'land=' 'p16=-DFT_SM90_POLY=16' 'p8=-DFT_SM90_POLY=8'
# and .bundle-s30d/sm90_check_land copied to .bundle-s30d/sm90_check. land: main at 164f1d5 (lazy mode 4 at d64).
# p16 / p8: every 16th / 8th pair of d64's exponentials through tile::poly_exp2 on the FMA pipe (6.25% / 12.5%).
# Why again: call 5's ncu put the MUFU at 61% beside the tensor pipe's 64% at d64 non-causal 4k, with mode 4's 8-10%
# fewer instructions leaving issue slots (38% busy); sessions 3, 19 and 23 had lost 2-3% with it under mode 3.
# 1. smoke, the full sm90_check of p16 (vary). 2. d64's grid twice, land and p16 interleaved (no peers). p8 spills
# 4-24 bytes in its small kernels (ptxas), and the first try of this call lost its machine: p16 alone, twice.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-s30d
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s30d p16
vary .bundle-s30d 2 --grid-d 64
step done
