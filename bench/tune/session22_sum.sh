#!/usr/bin/env bash
# Session 22's eighth call (~150 s; build: tests/cuda/build_variants.sh .bundle-s22e 'sum=-DFT_SM90_LAZY=4' on branch
# wip/s22-sumcheck, plus main's sm90_check as landed (f9822ae) as .bundle-s22e/sm90_check_land; carry .bundle-s22e).
# Call 7's ncu left the FMNMX (one an element) as what remains of the row max's price. sum (kLazy 4, measurement
# only) drops them while the lanes' block sums of P stay <= 2^8 (the FADDs run anyway, and a sum bounds each P);
# a larger sum takes the max of P and moves the reference. Wrong only where a block passes a reference by 2^128.
# sm90_check of sum, then the whole grid twice interleaved against land (no peers). Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s22e/sm90_check_sum
step "checks"
ck .bundle-s22e/sm90_check_sum --no-bench
grep -E "^==|^exit|passed|FAIL" "$OUT/checks.log"
ab .bundle-s22e land sum
step done
