#!/usr/bin/env bash
# Session 6, device call 3 (carry: .bundle .gl build-var14; ~300 s). The library with d128 on pingpong (call 2's
# winner): sm90_check on every launch mode, racecheck, memcheck, CUDA conformance. Then variants on top of it, the
# whole grid twice interleaved with peers: v1 d128 N=160, d64 two consumers N=128 4 stages; v2 d128 N=128 3 stages,
# d64 two consumers N=192; v3 d128 causal N=176, d64 two consumers 2 stages (all pingpong).
# Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
B=build-var14
. "$(dirname "$0")/device_env.sh"
step "checks"
for ctas in 0 7 -1; do ck .bundle/sm90_check --no-bench --ctas $ctas; done
ck compute-sanitizer --tool racecheck .bundle/sm90_check --quick --no-bench --ctas 5
ck compute-sanitizer --tool racecheck .bundle/sm90_check --quick --no-bench --ctas -1
ck compute-sanitizer --tool memcheck .bundle/sm90_check --quick --no-bench --ctas 0
for v in v1 v2 v3; do ck $B/sm90_check_$v --no-bench --quick --ctas 0; done
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
conformance cuda
ab $B head v1 v2 v3
FT_PEERS_TIMEOUT=120 peers_grid
step done
