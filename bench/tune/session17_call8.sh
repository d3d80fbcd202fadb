#!/usr/bin/env bash
# Session 17, call 8 (~240 s; carry .bundle .bundle-main .gl): wgmma descriptors moved on by one 32-bit add per
# k-step (tile::desc_add) instead of a make_desc each (call 7's ncu: ours executes 33-35% more warp instructions than
# cuDNN at causal 512, IMAD/LOP3/SHF/R2UR leading; the kernels shrink 2-3%). Checks (tile_tests, sm90_check,
# racecheck and memcheck --tiny, conformance on both CUDA paths); the whole grid twice interleaved, head (d7df629)
# against land (the bundle); a third run of the d64/d128 grids; the peers.
# run(carry=[".bundle", ".bundle-main", ".gl"], timeout_s=400, command='bash bench/tune/session17_call8.sh')
# Analyse: bench/tune/ab_grid.py grid.log head; bench/tune/parse_grid.py grid.log. Files: main.log checks.log
# conformance.log grid.log. The steps are call 6's, with head as the baseline and d64/d128 in the third run.
exec bash "$(dirname "$0")/session17_call6.sh" head .bundle-main "64 128"
