#!/usr/bin/env bash
# Session 17, call 4 (~330 s; carry .bundle .bundle-main .bundle-v3 .gl): the library with narrow first blocks (d64/d128
# causal short kernels, steps of 64 keys) and the producer role in a function of its own. Checks (tile_tests with the
# new wgmma test, sm90_check, racecheck and memcheck --tiny, conformance on both CUDA paths); then the whole grid twice
# interleaved: main (HEAD before this session, 57c4203), land (the bundle), gate (land with narrow blocks only while
# seqlen_k <= 2048: is d64 causal 4k's loss the narrow path or its code?); a third run of the d64/d128 grids; peers.
# run(carry=[".bundle", ".bundle-main", ".bundle-v3", ".gl"], timeout_s=480, command='bash bench/tune/session17_call4.sh')
# Analyse: bench/tune/ab_grid.py grid.log main; bench/tune/parse_grid.py grid.log. Files: main.log checks.log
# conformance.log grid.log. The third variant is .bundle-v3/sm90_check_$1 (default gate; call 5 ran nb1k).
set -u
v3=${1:-gate}
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
ck .bundle-v3/sm90_check_$v3 --no-bench
conformance cuda
mkdir -p /tmp/s17 && cp .bundle-main/sm90_check_main .bundle-v3/sm90_check_$v3 /tmp/s17/ &&
  cp "$FT_BUNDLE"/sm90_check /tmp/s17/sm90_check_land
ab /tmp/s17 main land "$v3"
step "d64/d128 third run"
for d in 64 128; do for v in main land "$v3"; do g /tmp/s17/sm90_check_$v --bench-only --grid --grid-d $d; done; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
