#!/usr/bin/env bash
# Session 32's third call (~250 s; carry .bundle-s32 .bundle-s32b .bundle-s32c .gl): why the stream's counter (sr)
# lost 4-10% at 1k-4k keys in call 2. srm: the same kernels, but every launch takes a pair of its own and a memset, as
# main does (DIMS="64 128" tests/cuda/build_variants.sh .bundle-s32c 'srm=-DFT_SM90_NO_STREAM_COUNTER'). srm as slow
# as sr: the kernel's code; srm as fast as base: the launches without a memset between them.
# 1. SASS of base and sr (cuobjdump), for a diff here.
# 2. d64's and d128's grids three times, base, sr and srm interleaved (ab_grid.py grid.log base).
# 3. ncu at d128 non-causal 1k, one launch each (the fifth): the kernel's own duration.
# Files: main.log grid.log ncu.log base.sass.gz sr.sass.gz
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-s32b
. "$(dirname "$0")/device_env.sh"
mkdir -p /tmp/v && cp .bundle-s32/sm90_check_base .bundle-s32b/sm90_check_sr .bundle-s32c/sm90_check_srm /tmp/v/
step sass
cuobjdump -sass /tmp/v/sm90_check_base | gzip > "$OUT/base.sass.gz"
cuobjdump -sass /tmp/v/sm90_check_sr | gzip > "$OUT/sr.sass.gz"
ls -la "$OUT"
timeout 60 /tmp/v/sm90_check_srm --tiny --no-bench | tail -1
for rep in 1 2 3; do
  step "grid round $rep"
  for d in 64 128; do for v in base sr srm; do g /tmp/v/sm90_check_$v --bench-only --grid --grid-d $d; done; done
done
step ncu
for v in base sr srm; do
  echo "######## $v" >> "$OUT/ncu.log"
  timeout 60 ncu --clock-control none --launch-skip 4 --launch-count 3 --section SpeedOfLight --kernel-name regex:sm90_fwd \
    /tmp/v/sm90_check_$v --bench-only --cell 128,1024,0 >> "$OUT/ncu.log" 2>&1
  echo "ncu $v exit $?"
done
grep -E "####|Duration|SM Frequency" "$OUT/ncu.log"
step done
