#!/usr/bin/env bash
# Session 8, last device call (~110 s): the library as it lands on main, with the row-group portable shader left out
# again (call 5): conformance on both backends and every path, sm90_check quick, the portable path timed once.
# run(carry=[".bundle", ".gl"], timeout_s=240, command='bash bench/tune/session8_call6.sh')
# Files: main.log checks.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
step "checks"
ck $B/sm90_check --no-bench --quick --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
conformance cuda vulkan
vk main $B/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 128 --seq 4096 \
  --path vulkan_portable
step done
