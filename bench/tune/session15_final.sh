#!/usr/bin/env bash
# Session 15, call 10 (~150 s; carry .bundle, .bundle-s16 and .gl): the d64 causal short kernel to 4k keys (one CTA
# per tile from 2k), as landed: sm90_check from the library build (d64 causal at 4096/4097 keys added), racecheck
# --tiny, and d64's grid, qpf4k (the library's) against qpf1k (the previous commit's kernels, call 7's land2),
# twice interleaved.
# run(carry=[".bundle", ".bundle-s16", ".gl"], timeout_s=300, command='bash bench/tune/session15_final.sh')
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-s16
step "checks"
ck "$FT_BUNDLE"/sm90_check --no-bench
san 150 racecheck "$FT_BUNDLE"/sm90_check --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log"
step "grid"
for rep in 1 2; do for v in qpf1k qpf4k; do g $B/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step done
