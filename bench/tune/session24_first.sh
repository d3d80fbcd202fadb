#!/usr/bin/env bash
# Session 24's first call (~200 s; build: bash bench/tune/session24_build.sh on main; carry .bundle .bundle-s24 .gl).
# d64 with 64-key blocks against main (128-key blocks): their --tiny checks and full sm90_check first (the jump and
# step cases drive the repair at the new block width), then d64's grid three times interleaved.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s24/sm90_check_bn64s6 .bundle-s24/sm90_check_bn64s8
step "checks"
ck .bundle-s24/sm90_check_bn64s6 --no-bench
ck .bundle-s24/sm90_check_bn64s8 --no-bench
grep -E "^==|passed|FAIL|^exit" "$OUT/checks.log" | tail -8
cp "$FT_BUNDLE"/sm90_check .bundle-s24/sm90_check_land
step "grid A/B, d64"
for rep in 1 2 3; do for v in land bn64s6 bn64s8; do
  g .bundle-s24/sm90_check_$v --bench-only --grid --grid-d 64
done; done
step done
