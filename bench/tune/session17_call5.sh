#!/usr/bin/env bash
# Session 17, call 5 (~330 s; carry .bundle .bundle-main .bundle-v3 .gl): call 4 again with the narrow path taken
# only where a consumer's first block is narrower than N (else the kernel's usual first-block code runs; call 4's land
# ran a narrow path of width N there, and d64 causal 2k/4k lost 1.7/3.5%). Checks (tile_tests, sm90_check,
# racecheck and memcheck --tiny, conformance on both CUDA paths); the whole grid twice interleaved: main (57c4203),
# land (the bundle), nb1k (land with narrow blocks only while seqlen_k <= 1024); a third run of the d64/d128 grids;
# peers.
# run(carry=[".bundle", ".bundle-main", ".bundle-v3", ".gl"], timeout_s=480, command='bash bench/tune/session17_call5.sh')
# Analyse: bench/tune/ab_grid.py grid.log main; bench/tune/parse_grid.py grid.log. Files: main.log checks.log
# conformance.log grid.log. The steps are call 4's, with nb1k as the third variant.
exec bash "$(dirname "$0")/session17_call4.sh" nb1k
