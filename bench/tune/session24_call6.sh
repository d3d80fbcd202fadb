#!/usr/bin/env bash
# Session 24's call 6 (~200 s; carry .bundle .bundle-s24 .gl: main's build with the small kernel in 8 stages, and
# .bundle-s24/sm90_check_st6, call 4's build with 6). Main's own build after call 5: its full check, d64 to 1k three
# times interleaved against st6, the whole grid once more, then the peers (issue 4's table).
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check
ck "$FT_BUNDLE"/sm90_check --no-bench
vs=st6
vary .bundle-s24 3 --grid-d 64 --grid-smax 1024
step "the whole grid"
g .bundle-s24/sm90_check_land --bench-only --grid
FT_PEERS_TIMEOUT=100 peers_grid
step done
