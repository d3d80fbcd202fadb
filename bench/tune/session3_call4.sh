#!/usr/bin/env bash
# Session 3, device call 4 (carry: .bundle .gl): the library as committed. Vulkan f16 table on the issue's cells
# (d 64/128/256 x S 1k/4k/16k x causal; 1 s warm-ups), then the Vulkan conformance suite (every path, the new
# portable tiles included). Sequential (call 3's parallel phase deadlocked on `wait`, which also waits for the log's
# process substitution); at most 8 files under $OUT.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "vulkan table"
timeout 200 .bundle/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 64,128,256 \
  --seq 1024,4096,16384 --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable --csv "$OUT/vk_table.csv" > "$OUT/vk_table.log" 2>&1
echo "table exit $?"
step "vulkan conformance"
timeout 150 .bundle/flashtile_tests --ft-backend=vulkan -tc='conformance*' > "$OUT/conformance.log" 2>&1; echo "conformance exit $?"
grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
step done
