#!/usr/bin/env bash
# Session 19 call 6 (~230 s; carry .bundle .bundle-s19c .gl): the candidate library (.bundle: ca27fb6 plus head groups
# of about 32 MB of K/V for dynamic causal launches) - tile_tests, sm90_check, racecheck and memcheck --tiny,
# conformance on both CUDA paths - then d64 and d128 to 4k three times interleaved against prev (ca27fb6's
# sm90_check, .bundle-s19c/sm90_check_prev), and the peers. Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
mkdir -p /tmp/land && cp .bundle-s19c/sm90_check_prev /tmp/land/ && cp "$FT_BUNDLE"/sm90_check /tmp/land/sm90_check_new
step "A/B to 4k"
for rep in 1 2 3; do for v in prev new; do for d in 64 128; do
  g /tmp/land/sm90_check_$v --bench-only --grid --grid-smax 4096 --grid-d $d
done; done; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
