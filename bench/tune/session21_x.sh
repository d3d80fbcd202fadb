#!/usr/bin/env bash
# Session 21's fourth call (~300 s; carry .bundle-s21x .gl). Built with tests/cuda/build_variants.sh .bundle-s21x
# 'p4=-DFT_SM90_CFG64="3:128:4:1:1:4"' 'p8=-DFT_SM90_CFG64="3:128:4:1:1:8"' 'd256c=-DFT_SM90_D256C_DYN=4096', and
# main (main's kernels, from call 3's bundle):
#   p4 / p8: d64 with every 4th / 8th softmax exponential pair on the FMA pipe (tile::poly_exp2). At d64 the ex2s
#     (MUFU, 16 a cycle per SM) take as long as the matrix products (session 20 ncu); session 3 lost 3-9% with it,
#     on a much earlier kernel.
#   d256c: d256 causal persistent on the dynamic scheduler to 4k keys (one CTA per tile today past 512).
# A smoke test (sm90_check --tiny of each) stops the call on a failure; then sm90_check of each, racecheck --tiny of
# d256c, the whole grid three times interleaved, the peers.
# Files: main.log checks.log grid.log.
# Ran as session 21 call 4 (all rejected); d256c needs `git apply bench/tune/session21_d256c.patch`.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s21x/sm90_check_p4 .bundle-s21x/sm90_check_d256c
variant_checks .bundle-s21x d256c p4 p8 d256c
ab3 .bundle-s21x main p4 p8 d256c
step done
