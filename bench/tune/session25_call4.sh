#!/usr/bin/env bash
# Session 25's call 4 (~220 s; carry .bundle .bundle-s25 .gl). Build: cmake --build build -j2 && bash
# bench/make_bundle.sh build .bundle (call 3's winners landed: d256 causal's short kernel persistent to 4k under the
# scheduler past 512 keys, d128 causal under the scheduler past 512), then tests/cuda/build_variants.sh .bundle-s25
#   p256e / d128e: -DFT_SM90_LIMITS="D:1:A:A:1:512", A = 1073741824 (kSm90Always): d256 / d128 causal's short kernel
#     persistent at every length (8k/16k: the main kernel one CTA per tile in land).
# The landing's sm90 checks, then d128's and d256's grids three times interleaved.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check
sm90_checks
smoke_some .bundle-s25 p256e d128e
cp "$FT_BUNDLE"/sm90_check .bundle-s25/sm90_check_land
step "grids"
for rep in 1 2 3; do
  for v in land p256e; do in_vs "$v" && g .bundle-s25/sm90_check_$v --bench-only --grid --grid-d 256; done
  for v in land d128e; do in_vs "$v" && g .bundle-s25/sm90_check_$v --bench-only --grid --grid-d 128; done
done
step done
