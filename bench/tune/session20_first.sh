#!/usr/bin/env bash
# Session 20's first call (~360 s; build: bench/tune/session20_build.sh; carry .bundle .bundle-s20 .gl).
# Candidates (branch wip/s20-uniform; bench/tune/session20_uniform.patch is wgt):
#   wgu: unsigned ring positions and the warpgroup index through tile::warp_uniform (a __shfl_sync, so the compiler
#     knows it is warp-uniform and keeps the wgmma descriptors in uniform registers). Session 19 call 9 measured ruw
#     (wgu plus the warp index) at 1.009x over two runs, d256 +2..5% (R2UR in d256 causal short 173 -> 36), but ruw
#     spilled 128 bytes in d64 non-causal (-2% at 512/1k); wgu does not spill.
#   wgt: wgu plus the dynamic scheduler's tile index (read from shared memory) through warp_uniform: the dynamic
#     kernels shrink by 56-104 instructions (d64 causal short, d128 non-causal short, ...), which ruw left alone.
# This call: the candidate library (.bundle, wgt) - tile_tests, sm90_check, racecheck and memcheck --tiny - and
# conformance on both CUDA paths; sm90_check and racecheck of wgu; the SASS of all three for bench/tune/sass_counts.py;
# the whole grid twice interleaved plus a third run; the peers (issue 4's same-call table: parse_grid.py).
# Land the winner with this call's numbers (wgt: commit the patch; wgu: the branch's first commit's diff, whose
# library checks are then sm90_check and racecheck only).
# Files: main.log checks.log conformance.log grid.log sass_base.txt.gz sass_wgu.txt.gz sass_wgt.txt.gz.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
variant_checks .bundle-s20 wgu wgu
conformance cuda
for v in base wgu wgt; do cuobjdump -sass .bundle-s20/sm90_check_$v 2>/dev/null | gzip > "$OUT/sass_$v.txt.gz"; done
ab .bundle-s20 base wgu wgt
step "third run"
for v in base wgu wgt; do g .bundle-s20/sm90_check_$v --bench-only --grid; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
