#!/usr/bin/env bash
# Session 5, device call 6 (carry: .bundle .gl build-var11). A scheduler role: the producer's thread picks each tile
# and hands it to the consumers in a shared slot published with the tile's Q load; rows that see no key (causal,
# Sq > Sk) are written by a small fill kernel, so the kernel runs only tiles with keys. build-var11: head (HEAD's
# kernel), stat (the new code, static order: must match head), dyn (-DFT_SM90_DYNAMIC=1: persistent launches take
# tiles from an atomic counter, m-block innermost and longest first, so CTAs running together share K/V in L2 and
# the load balances; d256 causal spills 44 bytes in this build). Persistent causal lost to one CTA per tile with the
# static order (call 5: d128 1k 321 vs 357); non-causal persistent beats one CTA per tile by up to 13%.
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
for v in stat dyn; do for ctas in 0 -1 7; do ck build-var11/sm90_check_$v --no-bench --ctas $ctas; done; done
grep -E "^==|^exit|passed|FAIL" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2; do
  for v in head stat dyn; do g build-var11/sm90_check_$v --bench-only --grid; done
done
FT_PEERS_TIMEOUT=120 peers_grid
step "racecheck"
timeout 80 compute-sanitizer --tool racecheck build-var11/sm90_check_dyn --quick --no-bench --ctas 5 2>&1 | tail -4 >> "$OUT/checks.log"
tail -4 "$OUT/checks.log"
step done
