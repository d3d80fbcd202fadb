#!/usr/bin/env bash
# Session 25's call 3 (~200 s; carry .bundle .bundle-s25 .gl; .bundle: call 2's). Call 2 had d256 causal 1k at +15%
# with its short kernel persistent under the scheduler (p256c), but 512 at -5.7% there (the scheduler replaced the
# static order of groups of 4 pairs). tests/cuda/build_variants.sh .bundle-s25 with
#   p256a / p256b / p256d: -DFT_SM90_LIMITS="256:1:L:L:1:512", L = 1024 / 2048 / 4096 (d256 causal: the short kernel
#     persistent to L keys, the scheduler past 512, the static order to 512 as before);
#   c128n64: -DFT_SM90_CFG128C="2:64:4:2" (d128 causal on 64-key blocks in 4 stages, pingpong: 512/1k are what count);
#   d128c: -DFT_SM90_LIMITS="128:1:4096:4096:1:512" (d128 causal: the scheduler from 513 keys, not 1025; session 19
#     had it lose 4.3% at 1k, before lazy rescaling).
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s25 p256a p256b p256d c128n64 d128c
for v in $vs; do ck .bundle-s25/sm90_check_$v --no-bench; done
grep -E "^==|passed|FAIL|^exit" "$OUT/checks.log"
cp "$FT_BUNDLE"/sm90_check .bundle-s25/sm90_check_land
step "grids"
for rep in 1 2 3; do
  for v in land p256a p256b p256d; do in_vs "$v" && g .bundle-s25/sm90_check_$v --bench-only --grid --grid-d 256; done
  for v in land c128n64 d128c; do in_vs "$v" && g .bundle-s25/sm90_check_$v --bench-only --grid --grid-d 128; done
done
step done
