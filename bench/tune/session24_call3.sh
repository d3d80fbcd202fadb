#!/usr/bin/env bash
# Session 24's call 3 (~480 s; build: cmake --build build -j2 && bash bench/make_bundle.sh build .bundle with d64's
# small kernel (Sm90Kind::small: four consumers, 64-key blocks, staged O, to 1024 keys); .bundle-s24/sm90_check_old
# is main before it (74db826); tests/cuda/build_variants.sh .bundle-s24 builds the variants: sqpf (the d64 causal
# small kernel with Q prefetch: call 2's c4cs, which spills 8 bytes), and with FT_SM90_SMALL d128 small kernels of
# three consumers on 64-key blocks (s128c causal, s128n non-causal) or 80-key ones (s128c80), never run before;
# carry .bundle .bundle-s24 .gl). Checks (tile tests, sm90_check, racecheck, memcheck, conformance on both CUDA
# paths), the whole grid twice interleaved old against land, the peers (issue 4's table), then d64's grid twice
# against sqpf and d128's twice against the s128 variants.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check
smoke_some .bundle-s24 sqpf s128c s128c80 s128n
sm90_checks
ck "$FT_BUNDLE"/cuda_sm80_check
for v in $vs; do ck .bundle-s24/sm90_check_$v --no-bench; done
grep -E "^==|passed|FAIL|^exit" "$OUT/checks.log" | tail -8
conformance cuda
land_ab .bundle-s24/sm90_check_old
cp "$FT_BUNDLE"/sm90_check .bundle-s24/sm90_check_land
step "variants"
for rep in 1 2; do for d in 64 128; do for v in land $vs; do
  [ $d = 64 ] && [ $v != land ] && [ $v != sqpf ] && continue
  [ $d = 128 ] && [ $v = sqpf ] && continue
  g .bundle-s24/sm90_check_$v --bench-only --grid --grid-d $d
done; done; done
step done
