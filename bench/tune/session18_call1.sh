#!/usr/bin/env bash
# Session 18 call 1 (~330 s; carry .bundle .bundle-pv .bundle-d256 .gl). Three experiments against main, the whole
# grid twice interleaved, then a third run of the rows they touch:
#   off/pv/pv128: bench/tune/session18_narrow_pv.sh's variants (branch wip/s18-narrow-pv): narrow first blocks' P·V.
#   d256s: d256 non-causal short kernel at every length (-DFT_SM90_D256_STAGE=2^30): N = 64, O staged in a buffer of
#     its own (the consumers take it in turn), so Q is released after the tile's last Q·Kᵀ and the next Q loads during
#     the last P·V and the epilogue (session 17: Q waited for the previous O store through its own buffer).
#   c128s3: d128 causal main kernel (2k+) with a 3-stage ring (-DFT_SM90_STAGES128C=3; 224 KB, cuDNN runs 232 KB).
# Variants built on main: tests/cuda/build_variants.sh .bundle-d256 'd256s=...' 'c128s3=...'.
# Analyse: bench/tune/ab_grid.py grid.log main. Files: main.log checks.log grid.log.
# After the call: FT_SM90_D256_STAGE became the config (d256 at 512) and FT_SM90_STAGES128C was removed (level).
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
for v in off pv pv128; do ck .bundle-pv/sm90_check_$v --no-bench; done
for v in d256s c128s3; do ck .bundle-d256/sm90_check_$v --no-bench; done
san 150 racecheck .bundle-pv/sm90_check_pv128 --tiny --no-bench
san 150 racecheck .bundle-d256/sm90_check_d256s --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log"
mkdir -p /tmp/s18 && cp "$FT_BUNDLE"/sm90_check /tmp/s18/sm90_check_main && cp .bundle-pv/sm90_check_* \
  .bundle-d256/sm90_check_* /tmp/s18/
ab /tmp/s18 main off pv pv128 d256s c128s3
step "third run"
for d in 64 128; do for v in main off pv pv128; do g /tmp/s18/sm90_check_$v --bench-only --grid --grid-d $d; done; done
for v in main d256s; do g /tmp/s18/sm90_check_$v --bench-only --grid --grid-d 256; done
g /tmp/s18/sm90_check_c128s3 --bench-only --grid --grid-d 128
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
