#!/usr/bin/env bash
# Session 19 call 4 (~250 s; carry .bundle .bundle-s19c .gl): the candidate library (.bundle: e079321 plus d64 causal
# persistent to 4k and d128 causal's dynamic launches in groups of 16 pairs) - tile_tests, sm90_check, racecheck and
# memcheck --tiny, conformance on both CUDA paths - then the whole grid twice (a third run to 4k) interleaved against
# land (e079321's kernels, .bundle-s19c/sm90_check_land) and fd (297ae97's), and the peers: issue 4's same-call table.
# Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
mkdir -p /tmp/land && cp .bundle-s19c/sm90_check_fd .bundle-s19c/sm90_check_land /tmp/land/ && cp "$FT_BUNDLE"/sm90_check /tmp/land/sm90_check_new
ab /tmp/land land new fd
step "third run"
for v in land new fd; do g /tmp/land/sm90_check_$v --bench-only --grid --grid-smax 4096; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
