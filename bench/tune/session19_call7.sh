#!/usr/bin/env bash
# Session 19 call 7 (~130 s; carry .bundle .gl): issue 4's table for the landed library (4a86338): the whole grid
# twice, then the peers (cuDNN and FA2 through PyTorch SDPA) in the same call. bench/tune/parse_grid.py grid.log.
# Files: main.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "grid"
mkdir -p /tmp/land && cp "$FT_BUNDLE"/sm90_check /tmp/land/sm90_check_final
for rep in 1 2; do g /tmp/land/sm90_check_final --bench-only --grid; done
FT_PEERS_TIMEOUT=100 peers_grid
step "grid 3"
g /tmp/land/sm90_check_final --bench-only --grid
step done
