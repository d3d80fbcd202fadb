#!/usr/bin/env bash
# Planned first device call of session 7 (~470 s): why the epilogue's O stores cost ~3 us a tile (session 6 call 5:
# without them d128 non-causal 512 runs +29%), and three cheaper store forms. Build here first (~4 min, repo root):
#   git apply bench/tune/session7_experiments.patch && rm -rf build-var18 &&
#   tests/cuda/build_variants.sh build-var18 'head=' 'noepi=-DFT_SM90_ABL_EPI=1' 'cs=-DFT_TILE_STORE_CS=1' \
#     'w8=-DFT_SM90_OSTORE=8' 'w16=-DFT_SM90_OSTORE=16' 'pfmap=-DFT_SM90_PREFETCH_MAPS=1' \
#     'cdyn=-DFT_SM90_CAUSAL_DYNAMIC=1' &&
#   git checkout backends/ && rm -rf build-var18/obj &&
#   cmake --build build --target tile_tests && cp build/tests/cuda/tile_tests build-var18/ &&
#   git checkout wip/sm90-ostage && tests/cuda/build_variants.sh build-var18 'ostage=-DFT_SM90_OSTAGE=1' &&
#   rm -rf build-var18/obj && git checkout main
# run(carry=[".bundle", ".gl", "build-var18"], timeout_s=560, command='bash bench/tune/session7_call1.sh'):
# 1. the wide-store tile test (8 bytes has not run on a GPU yet) and the store variants' checks;
# 2. ncu source counters at d128 non-causal 512, head against noepi (no O stores, wrong results): where the stall is;
# 3. the whole grid twice interleaved: head, cs (4-byte streaming stores), w8, w16 (quad-shuffled 8/16-byte stores),
#    ostage (branch wip/sm90-ostage: O staged in shared memory, stored by TMA from the producer warpgroup; checked
#    on every launch mode and with racecheck first), pfmap (the TMA descriptors prefetched at kernel start, O's
#    included: one-CTA-per-tile launches fetch them per tile), then peers. If ostage is correct and fast, merge the branch and
#    turn it on in sm90_traits.hpp (d128, d64 non-causal).
# Files: main.log checks.log ncu.log sass_head.csv sass_noepi.csv grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
B=build-var18
. "$(dirname "$0")/device_env.sh"
step "checks"
ck $B/tile_tests -tc='*wide*'
for v in cs w8 w16 pfmap; do for ctas in 0 7; do ck $B/sm90_check_$v --no-bench --quick --ctas $ctas; done; done
for ctas in 0 7 -1; do ck $B/sm90_check_ostage --no-bench --ctas $ctas; done
ck compute-sanitizer --tool racecheck $B/sm90_check_ostage --quick --no-bench --ctas 5
grep -E "^==|^exit|passed|FAIL|ERROR|hazard|test cases" "$OUT/checks.log"
step "ncu"
for v in head noepi; do
  echo "######## $v" >> "$OUT/ncu.log"
  timeout 90 ncu --clock-control none --launch-skip 4 --launch-count 1 --section SourceCounters --section WarpStateStats \
    --section SpeedOfLight -o /tmp/prof_$v --kernel-name regex:sm90_fwd $B/sm90_check_$v --bench-only --cell 128,512,0 \
    >> "$OUT/ncu.log" 2>&1
  timeout 60 ncu -i /tmp/prof_$v.ncu-rep --page details >> "$OUT/ncu.log" 2>&1
  timeout 60 ncu -i /tmp/prof_$v.ncu-rep --page source --csv --print-source sass > "$OUT/sass_$v.csv" 2>&1
  echo "$v sass exit $?"
done
grep -E "########|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Stall" "$OUT/ncu.log" | head -40
ab $B head cs w8 w16 ostage pfmap
FT_PEERS_TIMEOUT=120 peers_grid
step done
