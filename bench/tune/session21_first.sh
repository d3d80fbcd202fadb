#!/usr/bin/env bash
# Session 21's first call (~330 s; build: bash bench/tune/session21_build.sh; carry .bundle .bundle-s21 .gl).
# Clusters of two for d128 non-causal's short kernel (512-4096 keys; staged O, Q prefetch, 128-key blocks), as the
# main kernels got in session 20 (+1.4..3.2% at 8k/16k). Its 4k cell sits at 0.99-1.02x cuDNN and 1.80x FA2, so a
# gain there flips two of issue 4's bars. sc1k / sc2k cluster its launches past 1024 / 2048 keys.
# A smoke test first (sm90_check --tiny of sc1k, 60 s) stops the call if it hangs or fails; then sm90_check and
# racecheck --tiny of sc1k and sc2k (the new --tiny case: 2000 keys, one m-block, clustered in both), the whole grid
# three times interleaved, the peers. Land the winner by moving its value into sm90_config (short_cluster_min_sk),
# then run the library's checks and conformance with the next call.
# Last, bench/tune/sustained_probe.py at d128 non-causal 16k (probe.log).
# Files: main.log checks.log grid.log probe.log.
# Ran as session 21 call 1 (bench/results/2026-11-30_h200_session21); the code: session21_short_cluster.patch.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s21/sm90_check_sc1k
variant_checks .bundle-s21 sc1k sc1k sc2k
san 100 racecheck .bundle-s21/sm90_check_sc2k --tiny --no-bench
ab3 .bundle-s21 base sc1k sc2k
step "sustained probe"  # one launch against back to back, ours and cuDNN (bench/tune/sustained_probe.py)
FLASHTILE_LIBRARY=$PWD/.bundle/libflashtile.so timeout 120 python3 bench/tune/sustained_probe.py > "$OUT/probe.log" 2>&1
echo "probe exit $?"; cat "$OUT/probe.log"
step done
