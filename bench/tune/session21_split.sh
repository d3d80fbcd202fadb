#!/usr/bin/env bash
# Session 21's tail-split call (~360 s; build: bash bench/tune/session21_split_build.sh; carry .bundle .bundle-s21t
# .gl). Branch wip/s21-tail-split, not yet run on a device: clustered persistent launches of d128 non-causal's main
# kernel (past 4k keys) whose last round would leave clusters idle run those tiles in parts of their key blocks
# (sm90_tail_split; at 8k/16k 34 of 1024 pairs, in 7 parts: about 3% of the kernel idle today), or split every tile
# where there are fewer pairs than clusters; the last part of a tile merges (sm90_tail_merge). Bar: d128 non-causal
# 16k at 650 TFLOP/s (639-643 in session 20).
# A smoke test first (tile_tests' host cases, sm90_check --tiny of split: its d128 non-causal cases split 6 ways)
# stops the call on a hang or failure. Then the library's checks (tile_tests, sm90_check, racecheck and memcheck
# --tiny), conformance on both CUDA paths, the whole grid three times interleaved, the peers.
# Last, bench/tune/sustained_probe.py --n 100 at d128 non-causal 16k with clock and power samples (probe.log).
# Files: main.log checks.log conformance.log grid.log probe.log.
# Ran as session 21 call 2 (bench/results/2026-11-30_h200_session21); the code: session21_tail_split.patch.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s21t/sm90_check_split
sm90_checks
conformance cuda
ab3 .bundle-s21t nosplit split
step "sustained probe"  # 100 launches back to back with clock/power samples (bench/tune/sustained_probe.py)
FLASHTILE_LIBRARY=$PWD/.bundle/libflashtile.so timeout 120 python3 bench/tune/sustained_probe.py --n 100 \
  > "$OUT/probe.log" 2>&1
echo "probe exit $?"; grep -v Warn "$OUT/probe.log"
step done
