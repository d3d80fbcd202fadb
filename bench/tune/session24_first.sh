#!/usr/bin/env bash
# Session 24's first call (~330 s; build: bash bench/tune/session24_build.sh on main; carry .bundle .bundle-s24 .gl).
# Two ways to a finer interleave of d64's exponentials and GEMMs (session 23 call 8: MUFU and tensor cores each about
# 60% busy at d64 non-causal 4k), against main: 64-key blocks (bn64s6, bn64s8), and the three consumers taking
# turns in a ring (rot3, branch wip/s23-rot3). Their --tiny checks and full sm90_check first (the jump and step cases
# drive the repair), then d64's grid three times interleaved, then rot3's whole grid twice against main (its d128
# and d256 kernels run the ring code with two consumers: they must match).
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
# A variant whose --tiny check fails or hangs is left out of the timing (not the whole call, as smoke would).
smoke_some .bundle-s24 bn64s6 bn64s8 rot3
vary .bundle-s24 3 --grid-d 64
if [[ " $vs " == *" rot3 "* ]]; then
  step "grid A/B, rot3, d128 and d256"
  for rep in 1 2; do for d in 128 256; do for v in land rot3; do
    g .bundle-s24/sm90_check_$v --bench-only --grid --grid-d $d
  done; done; done
fi
step done
