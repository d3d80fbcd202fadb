#!/usr/bin/env bash
# Session 6, device call 4 (carry: .bundle .gl build-var15; ~280 s). The library as it lands (dynamic scheduler,
# d128 on pingpong, d128 causal one CTA per tile at every length): sm90_check on every launch mode, racecheck,
# memcheck, conformance on both backends. Then the whole grid twice interleaved against kfirst (a tile's first K
# block loads before its Q buffer frees, also with direct stores), with peers. Files: main.log checks.log
# conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
B=build-var15
. "$(dirname "$0")/device_env.sh"
step "checks"
for ctas in 0 7 -1; do ck .bundle/sm90_check --no-bench --ctas $ctas; done
ck compute-sanitizer --tool racecheck .bundle/sm90_check --quick --no-bench --ctas 5
ck compute-sanitizer --tool racecheck .bundle/sm90_check --quick --no-bench --ctas -1
ck compute-sanitizer --tool memcheck .bundle/sm90_check --quick --no-bench --ctas 0
for ctas in 0 7; do ck $B/sm90_check_kfirst --no-bench --quick --ctas $ctas; done
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
conformance cuda vulkan
ab $B head kfirst
FT_PEERS_TIMEOUT=120 peers_grid
step done
