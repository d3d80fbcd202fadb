#!/usr/bin/env bash
# Session 19 call 2 (~330 s; carry .bundle-s19b .gl): causal launches persistent with the dynamic scheduler (pd:
# -DFT_SM90_PERSISTENT=1 -DFT_SM90_DYNAMIC=1, the static_assert relaxed) against the landed library (fd, 297ae97).
# Why: the static persistent order hands CTA i tile i + k x grid; with head groups of G pairs x m-blocks near the grid
# size, that gives the same CTA the longest tiles every round (persistent d128 causal 4k: 394 vs 495 TFLOP/s one CTA
# per tile in call 1), which is why causal persistent launches lost from 2k. A counter hands the next tile to the CTA
# that is free. pd also tries head groups of 8 and 16 (run-time --head-group). Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-s19b
. "$(dirname "$0")/device_env.sh"
variant_checks .bundle-s19b pd pd
san 150 memcheck .bundle-s19b/sm90_check_pd --tiny --no-bench
step "grid A/B"
b=.bundle-s19b/sm90_check
for rep in 1 2; do
  g ${b}_fd --bench-only --grid; g ${b}_pd --bench-only --grid
  g ${b}_pd --bench-only --grid --head-group 8; g ${b}_pd --bench-only --grid --head-group 16
done
step "third run"
g ${b}_fd --bench-only --grid --grid-smax 4096; g ${b}_pd --bench-only --grid --grid-smax 4096
g ${b}_pd --bench-only --grid --grid-smax 4096 --head-group 8
FT_PEERS_TIMEOUT=100 peers_grid
step done
