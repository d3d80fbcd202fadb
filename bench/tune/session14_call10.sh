#!/usr/bin/env bash
# Session 14 call 10 (~170 s; carry .bundle, .bundle-v14 and .gl): calls 8-9 found our short causal kernels executing
# 24-26% more instructions than cuDNN's, most of the excess in integer compares, logic, IMADs and selects: the causal
# mask, a map() with a (row, col) predicate. mask (this tree): tile::mask_cols, the lane's column offset folded into
# per-row limits, one compare and select an element. Checks (tile_tests with its new mask_cols test, sm90_check,
# conformance on cuda_sm90), then the whole grid twice interleaved against land; ncu's instruction count at d64
# causal 512 again.
# run(carry=[".bundle", ".bundle-v14", ".gl"], timeout_s=300, command='bash bench/tune/session14_call10.sh')
# Files: main.log checks.log grid.log conformance.log ncu.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-v14
step "checks"
ck $FT_BUNDLE/tile_tests
ck $B/sm90_check_mask --no-bench
grep -E "^==|^exit|passed|FAIL|test cases|mask_cols" "$OUT/checks.log"
timeout 60 $FT_BUNDLE/flashtile_tests --ft-backend=cuda --ft-path=cuda_sm90 -tc='conformance*' > "$OUT/conformance.log" 2>&1
echo "sm90 conformance exit $?"
grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
ab $B land mask
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step "ncu"
timeout 40 ncu --clock-control none --launch-skip 4 --launch-count 1 --metrics smsp__inst_executed.sum,gpu__time_duration.sum \
  --kernel-name regex:sm90_fwd $B/sm90_check_mask --bench-only --cell 64,512,1 > "$OUT/ncu.log" 2>&1
grep -E "inst_executed|duration" "$OUT/ncu.log"
step done
