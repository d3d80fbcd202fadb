#!/usr/bin/env bash
# Planned first device call of session 9 (~150 s): the d64 causal short cells, the furthest from cuDNN (session 8
# call 4: 0.72/0.76/0.82/0.90x at 512/1k/2k/4k). Two tile shapes against the shipped one (3 consumers x 192 rows,
# 128-key blocks, own blocks to 1k):
#   c64pp:  2 consumers x 128 rows with pingpong (tiles on the 128-key grid, so no diagonal block is crossed by a
#           tile; session 6 rejected two consumers at d64 over the whole grid, before own blocks and staged O);
#   c64n64: 3 consumers x 192 rows, 64-key blocks, 6 stages (a finer diagonal, more iterations).
# Read the causal rows (the non-causal d64 kernels change too). Prebuilt here at bd9e093:
#   rm -rf build-var22 && tests/cuda/build_variants.sh build-var22 'head=' 'c64pp=-DFT_SM90_CFG64="2:128:4:2"' \
#     'c64n64=-DFT_SM90_CFG64="3:64:6:1"' && rm -rf build-var22/obj
# Rebuild it if main's sm90 sources moved since.
# run(carry=[".bundle", ".gl", "build-var22"], timeout_s=300, command='bash bench/tune/session9_call1.sh')
# Table: bench/tune/ab_grid.py grid.log head. Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
B=build-var22
. "$(dirname "$0")/device_env.sh"
step "checks"
for v in c64pp c64n64; do ck $B/sm90_check_$v --no-bench --quick --ctas 0; done
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2 3; do for v in head c64pp c64n64; do g $B/sm90_check_$v --bench-only --grid --grid-d 64; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
