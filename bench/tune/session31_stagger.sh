#!/usr/bin/env bash
# Session 31's first call (~480 s; carry .bundle-s31 .gl). Staggered consumers (Sm90Config::stagger, experiment flag
# FT_SM90_STAGGER): at each tile's first block the second half of the consumers issues its Q·Kᵀ only after the first
# half's S landed (s1) or after its first softmax (s2), to break the lockstep that session 26's trace showed (four
# consumers' S and P·V within 250 cycles, a block about the tensor work plus the exponentials, added). Applies to the
# kernels without pingpong: every d64 and d256 kernel; d128 is unchanged.
# Build: DIMS="64 256" tests/cuda/build_variants.sh .bundle-s31 'base=' 's1=-DFT_SM90_STAGGER=1' 's2=-DFT_SM90_STAGGER=2'
# 1. smoke, racecheck --tiny and the full sm90_check of s1 and s2.
# 2. d64's grid and d256's grid three times, base, s1 and s2 interleaved. Read: bench/tune/ab_grid.py grid.log base.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-s31
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s31 s1 s2
for v in $vs; do san 150 racecheck .bundle-s31/sm90_check_$v --tiny --no-bench; done
for v in $vs; do ck .bundle-s31/sm90_check_$v --no-bench; done
grep -E "^==|^exit|hazard|passed|FAIL" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2 3; do for d in 64 256; do for v in base $vs; do
  g .bundle-s31/sm90_check_$v --bench-only --grid --grid-d $d
done; done; done
step done
