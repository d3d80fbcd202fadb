#!/usr/bin/env bash
# (Record: the FT_SM90_QPF_NC / FT_SM90_SHORT_N / FT_SM90_SHORT_N256 experiment macros were removed when session 16
# landed; rebuilding these variants needs the tree of that call.)
# Session 16, call 3 (carry .bundle .bundle-v3 .gl): variants against main (HEAD's kernels), the whole grid twice
# interleaved.
#  - s1: this tree without flags (its d128 and causal kernels byte-identical to HEAD's; d64 / d256 non-causal not).
#  - shq: shifted rows in the d64 causal short kernel with Q loaded from row >= 0 and rotated bands
#    (FT_SM90_SHIFT=1; call 2's form, with negative TMA coordinates, stopped on an illegal instruction) + Q prefetch
#    in the d128 non-causal short kernel with N = 128 (FT_SM90_QPF_NC=128). Disjoint kernels.
#  - nn: d128 non-causal short kernel with N = 128 alone (call 2: +3.4/+1.8% at 512/1k) + a d256 short kernel to 1k
#    with N = 64 (512 = 8 x 64; N = 80 reads 560 keys) (FT_SM90_SHORT_N=128 FT_SM90_SHORT_N256=64). Disjoint kernels.
# Checks: sm90_check correctness of each; racecheck and memcheck --tiny of shq and nn.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
mkdir -p /tmp/s16 && cp "$FT_BUNDLE"/sm90_check /tmp/s16/sm90_check_main && cp .bundle-v3/sm90_check_* /tmp/s16/
step "checks"
for v in s1 shq nn; do ck /tmp/s16/sm90_check_$v --no-bench; done
for v in shq nn; do
  san 150 racecheck /tmp/s16/sm90_check_$v --tiny --no-bench
  san 150 memcheck /tmp/s16/sm90_check_$v --tiny --no-bench
done
grep -E "^==|^exit|passed|FAIL|hazard|ERROR SUMMARY" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2; do for v in main s1 shq nn; do g /tmp/s16/sm90_check_$v --bench-only --grid; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
