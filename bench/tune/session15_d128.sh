#!/usr/bin/env bash
# Session 15, call 7 (~150 s; carry .bundle-s15b and .gl): d128 causal 512's Q-prefetch kernel with constant named
# barrier ids (land2) against its form with 3 + c (land, call 5: persistent 0.129-0.131 ms where call 4's main kernel
# with a second Q buffer ran 0.123-0.124) and main's (base); d128's grid to 2k, three times interleaved.
# run(carry=[".bundle-s15b", ".gl"], timeout_s=300, command='bash bench/tune/session15_d128.sh')
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-s15b
step "checks"
ck $B/sm90_check_land2 --no-bench
san 150 racecheck $B/sm90_check_land2 --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log"
step "grid"
for rep in 1 2 3; do for v in base land land2; do g $B/sm90_check_$v --bench-only --grid --grid-d 128 --grid-smax 2048; done; done
step done
