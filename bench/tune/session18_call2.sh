#!/usr/bin/env bash
# Session 18 call 2 (~450 s; carry .bundle .bundle-main .bundle-cs .gl). The landing candidate (.bundle: d256
# non-causal 512 runs its short kernel, N = 64 with staged O) with every check, conformance on both CUDA paths, and
# issue 4's table; beside it three experiments, causal short kernels with staged O (-DFT_SM90_CSTAGE=64/128/256,
# built on the candidate: tests/cuda/build_variants.sh .bundle-cs ...): O leaves through buffers of its own instead of
# the tile's Q buffer, and the storer thread, not the consumer, waits for the TMA store.
# main: .bundle-main/sm90_check_main (HEAD before). Analyse: bench/tune/ab_grid.py grid.log main, parse_grid.py
# grid.log. Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
for v in d64cs d128cs d256cs; do ck .bundle-cs/sm90_check_$v --no-bench; done
for v in d64cs d128cs; do san 150 racecheck .bundle-cs/sm90_check_$v --tiny --no-bench; done
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log" | tail -12
conformance cuda_sm90 cuda_sm80
mkdir -p /tmp/s18 && cp .bundle-main/sm90_check_main .bundle-cs/sm90_check_* /tmp/s18/ &&
  cp "$FT_BUNDLE"/sm90_check /tmp/s18/sm90_check_land
ab /tmp/s18 main land d64cs d128cs d256cs
step "third run"
for v in main land d64cs; do g /tmp/s18/sm90_check_$v --bench-only --grid --grid-d 64 --grid-smax 4096; done
for v in main land d128cs; do g /tmp/s18/sm90_check_$v --bench-only --grid --grid-d 128 --grid-smax 1024; done
for v in main land d256cs; do g /tmp/s18/sm90_check_$v --bench-only --grid --grid-d 256 --grid-smax 1024; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
FT_PEERS_TIMEOUT=100 peers_grid
step done
