#!/usr/bin/env bash
# Session 19 call 9 (~160 s; carry .bundle-s19f .gl): per-block integer work in the consumer loop (session 18's ncu:
# the d64 causal 512 loop ran 472 instructions a warp a block, ~110 of them integer/moves).
#   ru: ring positions unsigned (g % S, g / S of a power of two: AND and shift instead of signed fix-ups);
#   ruw: ru plus warp and warpgroup indices through __shfl_sync (tile::warp_uniform, CUTLASS's trick), so the compiler
#     may keep descriptors in uniform registers (R2UR before each wgmma otherwise); it spills 128 bytes in d64
#     non-causal.
# sm90_check --quick of each, the whole grid twice interleaved against base (4a86338's kernels, the same build
# script), and the SASS of the d64 kernels of each (cuobjdump) for counting here. Files: main.log checks.log grid.log
# sass_*.txt.gz.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60 FT_BUNDLE=.bundle-s19f
. "$(dirname "$0")/device_env.sh"
for v in ru ruw; do ck .bundle-s19f/sm90_check_$v --quick --no-bench; done
grep -E "passed|FAIL" "$OUT/checks.log"
for v in base ru ruw; do cuobjdump -sass .bundle-s19f/sm90_check_$v 2>/dev/null | gzip > "$OUT/sass_$v.txt.gz"; done
ls -la "$OUT"
step "A/B"
for rep in 1 2; do for v in base ru ruw; do g .bundle-s19f/sm90_check_$v --bench-only --grid; done; done
step done
