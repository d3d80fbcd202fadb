#!/usr/bin/env bash
# Session 19 call 5 (~100 s; carry .bundle .gl): head groups of the dynamic causal launches to 4k, run-time overrides
# of the landed library's sm90_check (d128's 16 pairs and d64's all pairs are the defaults): 32 and 64 pairs, and one
# group of all pairs (--m-major 1), interleaved twice. Read d64/d128 causal 2k/4k only (the overrides also regroup
# the static and one-CTA-per-tile launches). Files: main.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
step "head groups"
b=$FT_BUNDLE/sm90_check
for rep in 1 2; do
  g $b --bench-only --grid --grid-smax 4096 --grid-d 64; g $b --bench-only --grid --grid-smax 4096 --grid-d 128
  for o in "--head-group 32" "--head-group 64" "--m-major 1"; do
    g $b --bench-only --grid --grid-smax 4096 --grid-d 64 $o; g $b --bench-only --grid --grid-smax 4096 --grid-d 128 $o
  done
done
step done
