#!/usr/bin/env bash
# Session 15, call 4 (ran from branch wip/s15-qbuf2 at 770189a: main lacks its FT_SM90_QBUF2C; carry .bundle-s15b and
# .gl; nothing to build). ncu (call 2) put 6.3% of our d64 causal 512 kernel's stall samples on the consumers' Q wait
# at each tile's start: with one Q buffer the producer loads Q(j + 1) only after every consumer's last Q·Kᵀ of tile j,
# and the rest of tile j is shorter than the load. q2: causal d64/d128 with Q double-buffered, no chaining
# (FT_SM90_QBUF2C); the grid's persistent column then shows d128 causal persistent with it. ot: O through a TMA store
# at d64 too (FT_SM90_OTMA=1; d64 causal spills 4 bytes), q2ot both (spills 16-24 bytes). The whole grid twice
# interleaved.
# run(carry=[".bundle-s15b", ".gl"], timeout_s=400, command='bash bench/tune/session15_q2.sh')
# Analyse: bench/tune/ab_grid.py grid.log base. Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-s15b
step "checks"
ck $B/sm90_check_q2 --no-bench
ck $B/sm90_check_q2 --no-bench --ctas 132
ck $B/sm90_check_q2ot --no-bench
san 120 racecheck $B/sm90_check_q2 --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log"
ab $B base q2 ot q2ot
step done
