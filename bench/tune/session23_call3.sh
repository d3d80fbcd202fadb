#!/usr/bin/env bash
# Session 23 call 3 (~250 s; build: cmake --build build && bash bench/make_bundle.sh build .bundle on the branch; carry
# .bundle .bundle-s23 .gl). Call 1 failed one jump case: a block max 126..128 past the reference gave a finite P sum,
# whose corr (2^-127) ex2.ftz flushed to 0. Call 2 (blocks past a lane sum of 2^64 redo S) passed everything and ran
# mode 3 at +1..9%, but d64 spilled with the repair inside step. Now the repair runs after the P·V in flight
# (Sm90Softmax::retry), P's registers free: no spills, so mode 3 in every head dim (land).
#  - Checks of the library: tile_tests, sm90_check, racecheck and memcheck --tiny, cuda_sm80_check, conformance (cuda).
#  - The whole grid twice interleaved: main (mode 2), land (mode 3, repair after P·V), sum64 (call 2's binary: mode 3
#    everywhere, repair inside step, d64 spilling); then the peers.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
library_checks
cp "$FT_BUNDLE"/sm90_check .bundle-s23/sm90_check_land
ab .bundle-s23 main land sum64
FT_PEERS_TIMEOUT=100 peers_grid
step done
