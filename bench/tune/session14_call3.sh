#!/usr/bin/env bash
# Session 14 call 3 (~330 s; carry .bundle, .bundle-v14 and .gl: nothing to build on the device).
#  - The landed library (sm90 d256 lazy rescaling, KHR d256 with id 29 = 3): KHR conformance (the table changed),
#    then issue 5's table (every Vulkan path and cuda_sm90, cuDNN f16 on the same cells).
#  - Two CTAs per SM for the short causal cells, the worst of issue 4 (d64 0.72-0.76x, d128 0.79-0.88x cuDNN at
#    512/1k): one consumer of 64 rows per CTA (kCtasPerSm = 2), so one CTA's fill and drain run under the other's
#    GEMMs. c64a: FT_SM90_CFG64="1:128:2:1", c64b: "1:64:4:1", c128a: FT_SM90_CFG128="1:64:2:1"; each against land
#    on its head dim's grid, twice interleaved.
# run(carry=[".bundle", ".bundle-v14", ".gl"], timeout_s=480, command='bash bench/tune/session14_call3.sh')
# Files: main.log checks.log grid.log conformance.log vk.csv vk_out.log clocks.log peers_f16.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-v14 W=/tmp/w14; mkdir -p $W
for v in land c64a c64b c128a; do printf '#!/bin/sh\nexec %s/sm90_check_%s "$@"\n' "$B" $v > $W/sm90_check_$v; done
chmod +x $W/*
step "checks: two CTAs per SM"
for v in c64a c64b c128a; do ck $W/sm90_check_$v --no-bench --quick; done
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log" | head -20
step "grid A/B: two CTAs per SM"
for rep in 1 2; do
  for v in land c64a c64b; do g $W/sm90_check_$v --bench-only --grid --grid-d 64 --grid-smax 4096; done
  for v in land c128a; do g $W/sm90_check_$v --bench-only --grid --grid-d 128 --grid-smax 4096; done
done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step "KHR conformance"
timeout 100 $FT_BUNDLE/flashtile_tests --ft-backend=vulkan --ft-path=vulkan_coopmat -tc='conformance*' \
  > "$OUT/conformance.log" 2>&1
echo "KHR conformance exit $?"
grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
issue5_table 440
step done
