#!/usr/bin/env bash
# Session 18 call 3 (~350 s; carry .bundle .bundle-main .bundle-c256 .gl). The landing candidate (.bundle: d256's
# short kernel, N = 64 with staged O, at 512 causal and non-causal) with every check, conformance on both CUDA paths
# and issue 4's table against main (HEAD before the session) and land1 (call 2's candidate, non-causal only); beside
# it d256 causal's short kernel to 1k / 2k, one CTA per tile past 512 (-DFT_SM90_SHORT256C=1024/2048, built on the
# candidate: tests/cuda/build_variants.sh .bundle-c256 ...).
# Analyse: bench/tune/ab_grid.py grid.log main, parse_grid.py grid.log. Files: main.log checks.log conformance.log
# grid.log.
# After the call: FT_SM90_SHORT256C was removed (1k/2k lost 6%).
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
for v in c256k1 c256k2; do ck .bundle-c256/sm90_check_$v --no-bench; done
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log" | tail -6
conformance cuda
mkdir -p /tmp/s18 && cp .bundle-main/sm90_check_main .bundle-main/sm90_check_land1 .bundle-c256/sm90_check_* /tmp/s18/ &&
  cp "$FT_BUNDLE"/sm90_check /tmp/s18/sm90_check_land
ab /tmp/s18 main land c256k1 c256k2
step "third run"
for v in main land1 land c256k1 c256k2; do g /tmp/s18/sm90_check_$v --bench-only --grid --grid-d 256 --grid-smax 2048; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
FT_PEERS_TIMEOUT=100 peers_grid
step done
