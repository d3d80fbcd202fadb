#!/usr/bin/env bash
# (Record: the FT_SM90_QPF_NC / FT_SM90_SHORT_N / FT_SM90_SHORT_N256 experiment macros were removed when session 16
# landed; rebuilding these variants needs the tree of that call.)
# Session 16, call 2 (carry .bundle .bundle-v2 .gl): variants of the short kernels against main (HEAD's kernels).
#  - s0: this tree without flags (Sm90Tile carries row0; Sm90Params row_shift): must match main.
#  - sq: shifted rows in the d64 causal short kernel (FT_SM90_SHIFT=1: the ragged 192-row tile first, where it sees
#    the fewest keys) + Q prefetch in the non-causal short kernels with staged O (FT_SM90_QPF_NC=1: d64 non-causal,
#    d128 non-causal to 4k with N = 128). Disjoint kernels, so one binary measures both.
#  - n128: d128 non-causal short kernel with N = 128 alone (FT_SM90_SHORT_N=128), to separate it from qpf.
# Checks: each variant's sm90_check correctness; racecheck and memcheck --tiny of sq.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
mkdir -p /tmp/s16 && cp "$FT_BUNDLE"/sm90_check /tmp/s16/sm90_check_main && cp .bundle-v2/sm90_check_* /tmp/s16/
step "checks"
for v in s0 sq n128; do ck /tmp/s16/sm90_check_$v --no-bench; done
san 150 racecheck /tmp/s16/sm90_check_sq --tiny --no-bench
san 150 memcheck /tmp/s16/sm90_check_sq --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard|ERROR SUMMARY" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2; do
  for v in main s0 sq; do g /tmp/s16/sm90_check_$v --bench-only --grid; done
  g /tmp/s16/sm90_check_n128 --bench-only --grid --grid-d 128
done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
