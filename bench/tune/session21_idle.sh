#!/usr/bin/env bash
# Session 21's sixth call (~300 s; carry .bundle .bundle-s21w .gl). The producer and the storer wait on the consumers
# suspended (mbarrier.try_wait with a suspend-time hint, tile::wait_idle) instead of polling: session 20's ncu of the
# d128 non-causal kernel counted 136 polls of k_empty a K/V block (7.5% of its instructions), and the sustained grid
# runs at the power cap (calls 2 and 5), where instructions cost clock.
#   build: tests/cuda/build_variants.sh .bundle-s21w 'idle=' 'all=-DFT_MBAR_WAIT_IDLE_ALL' (main: main's kernels,
#   from call 3's bundle); .bundle: the library with idle waits (the candidate).
#   all: every mbarrier wait suspends, the consumers' too.
# A smoke test stops the call on a hang; then the candidate library's checks (tile_tests, sm90_check, racecheck and
# memcheck --tiny), conformance on both CUDA paths, sm90_check of all, the whole grid three times interleaved, the
# peers. Files: main.log checks.log conformance.log grid.log.
# Ran as session 21 call 6 (level, not landed); idle needs `git apply bench/tune/session21_idle.patch`.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s21w/sm90_check_idle .bundle-s21w/sm90_check_all
sm90_checks
ck .bundle-s21w/sm90_check_all --no-bench
conformance cuda
ab3 .bundle-s21w main idle all
step done
