#!/usr/bin/env bash
# Session 6, device call 2 (carry: build-var13; ~320 s). Chained tiles with one Q buffer (FT_SM90_CHAIN=3: d64 and
# d128; the next tile's Q loads once this tile's last Q·Kᵀ is done, its first Q·Kᵀ goes out with this tile's last
# P·V, so the epilogue runs under it), the same plus an L2 prefetch of the next Q (chainpf), and pingpong with the
# dynamic scheduler (pp), against main (base); checks first, then the whole grid twice interleaved, then peers.
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
B=build-var13
. "$(dirname "$0")/device_env.sh"
step "checks"
for v in chain chainpf; do for ctas in 0 7 -1; do ck $B/sm90_check_$v --no-bench --ctas $ctas; done; done
ck $B/sm90_check_pp --no-bench --ctas 0
ck compute-sanitizer --tool racecheck $B/sm90_check_chain --quick --no-bench --ctas 5
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
ab $B base chain chainpf pp
FT_PEERS_TIMEOUT=120 peers_grid
step done
