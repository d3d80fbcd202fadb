#!/usr/bin/env bash
# Issue 4's same-call table for the bundle's kernels (~200 s; carry .bundle and .gl; nothing to build beyond .bundle).
# Written as session 16's first call (session 15's kernels, .bundle at 1491be8), and generic: any session's first call
# can run it for a same-call table with the landed kernels.
#  - Checks: tile_tests; sm90_check; racecheck and memcheck --tiny; the conformance suite on cuda_sm90 and cuda_sm80.
#  - The grid twice (the library's sm90_check, as sm90_check_main), then the peers.
# run(carry=[".bundle", ".gl"], timeout_s=360, command='bash bench/tune/session16_first.sh')
# Analyse: bench/tune/parse_grid.py grid.log. Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
mkdir -p /tmp/s16 && cp "$FT_BUNDLE"/sm90_check /tmp/s16/sm90_check_main  # named for parse_grid.py's columns
ab /tmp/s16 main
FT_PEERS_TIMEOUT=100 peers_grid
step done
