#!/usr/bin/env bash
# Session 19 call 3 (~400 s; carry .bundle .bundle-s19c .gl): the candidate library (.bundle: 297ae97 plus dynamic
# causal scheduling at d64/d128 and d128 causal persistent to 4k, static order to 1k) - tile_tests, sm90_check,
# racecheck and memcheck --tiny, conformance on both CUDA paths - then the whole grid twice (a third run to 4k)
# interleaved against fd (297ae97's kernels, .bundle-s19c/sm90_check_fd), and the peers: issue 4's same-call table.
# Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
mkdir -p /tmp/land && cp .bundle-s19c/sm90_check_fd /tmp/land/sm90_check_fd && cp "$FT_BUNDLE"/sm90_check /tmp/land/sm90_check_land
ab /tmp/land fd land
step "third run"
for v in fd land; do g /tmp/land/sm90_check_$v --bench-only --grid --grid-smax 4096; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
