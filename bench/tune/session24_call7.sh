#!/usr/bin/env bash
# Session 24's call 7 (~110 s, the session's last device seconds; build: bash bench/tune/session24_split_build.sh;
# carry .bundle .bundle-split .gl). A first look at S in column halves (branch wip/s24-split-s): its checks, d64's
# grid twice and d128's once, interleaved against land. session24_split_full.sh is the full measurement.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-split split
vary .bundle-split 2 --grid-d 64
for v in land $vs; do g .bundle-split/sm90_check_$v --bench-only --grid --grid-d 128; done
step done
