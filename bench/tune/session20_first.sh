#!/usr/bin/env bash
# Session 20's first call (~330 s; build: bench/tune/session20_build.sh; carry .bundle .bundle-s20 .gl).
# The candidate: bench/tune/session20_uniform.patch (wip/s20-uniform). Session 19 call 9 measured ruw (the patch plus
# a warp-uniform warp index) at 1.009x over two runs, d256 +2..5% (its R2UR before wgmmas down from 173 to 36 in d256
# causal short: call9/sass_counts.md), but ruw spilled 128 bytes in d64 non-causal (-2% at 512/1k). The patch drops
# the warp index's shuffle (no spill; code sizes like ruw's).
# This call: the candidate library's checks (tile_tests, sm90_check, racecheck, memcheck --tiny) and conformance on
# both CUDA paths; the whole grid twice interleaved against base plus a third run; the SASS of both for
# bench/tune/sass_counts.py; the peers (issue 4's same-call table for the candidate, `wgu` in parse_grid.py).
# Land it if it wins: commit the patch (git add the two files) with this call's numbers.
# Files: main.log checks.log conformance.log grid.log sass_base.txt.gz sass_wgu.txt.gz.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
for v in base wgu; do cuobjdump -sass .bundle-s20/sm90_check_$v 2>/dev/null | gzip > "$OUT/sass_$v.txt.gz"; done
ab .bundle-s20 base wgu
step "third run"
for v in base wgu; do g .bundle-s20/sm90_check_$v --bench-only --grid; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
