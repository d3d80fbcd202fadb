#!/usr/bin/env bash
# Session 25's call 2 (~380 s; carry .bundle .bundle-s25 .gl). Build: cmake --build build -j2 && bash
# bench/make_bundle.sh build .bundle (d64 causal's short kernel at every length, persistent), then
# tests/cuda/build_variants.sh .bundle-s25 with
#   selfreset: -DFT_SM90_SELFRESET=1 (the scheduler's counter zeroed once, reset by the launch's last producer: no
#     memset between launches);
#   nqpf: -DFT_SM90_QPREFETCH=2 -DFT_SM90_SMALL_QPF=1 (Q prefetch in every short and small kernel to d128: d64
#     non-causal's small kernel never had it);
#   s256c / p256c / m256c: -DFT_SM90_LIMITS="256:1:1024:512:0:0" / "256:1:1024:1024:1:0" / "256:1:512:1024:1:0" (d256
#     causal: the short kernel to 1k; that and persistent with the scheduler to 1k; the main kernel persistent with
#     the scheduler at 1k).
# The landing's checks, then each head dim's grid three times, land against the variants that touch it.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check
sm90_checks
smoke_some .bundle-s25 selfreset nqpf s256c p256c m256c
cp "$FT_BUNDLE"/sm90_check .bundle-s25/sm90_check_land
step "grids"
for rep in 1 2 3; do
  for v in land selfreset nqpf; do in_vs "$v" && g .bundle-s25/sm90_check_$v --bench-only --grid --grid-d 64; done
  for v in land selfreset; do in_vs "$v" && g .bundle-s25/sm90_check_$v --bench-only --grid --grid-d 128; done
  for v in land selfreset s256c p256c m256c; do in_vs "$v" && g .bundle-s25/sm90_check_$v --bench-only --grid --grid-d 256; done
done
step done
