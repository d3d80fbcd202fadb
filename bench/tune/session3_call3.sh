#!/usr/bin/env bash
# Session 3, device call 3 (carry: .bundle .gl). The library as committed (KHR d64 tile 4,32; portable d128 48 KB
# tile): Vulkan f16 table on the issue's cells (d 64/128/256 x S 1k/4k/16k x causal), 1 s warm-ups; portable tile
# candidates for d64/d256; then, in parallel, the tests (conformance of every path), the CUDA checks, and the
# conformance suite with each portable candidate forced. Logs go to $OUT directly.
# As run; its bare `wait` below hung past every job's end until the call's limit (device_env.sh): do not copy it.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
B=.bundle/flashtile_bench
step "vulkan table"
timeout 260 $B --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 64,128,256 --seq 1024,4096,16384 \
  --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable --csv "$OUT/vk_table.csv" > "$OUT/vk_table.log" 2>&1; echo "table exit $?"
step "portable candidates"
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 --no-grid --path vulkan_portable"
vk pt_d64_64,16,128,4,2,4 "FLASHTILE_VKPT_TILE=64:64,16,128,4,2,4" $B $common $(cells 64 4096 "0 1")
vk pt_d256_32,8,128,4,2,4 "FLASHTILE_VKPT_TILE=256:32,8,128,4,2,4" $B $common $(cells 256 4096 "0 1")
vk pt_d256_16,16,128,4,2,4 "FLASHTILE_VKPT_TILE=256:16,16,128,4,2,4" $B $common $(cells 256 4096 "0 1")
step "correctness (parallel)"
T=.bundle/flashtile_tests
c() { local n=$1; shift; (echo "== $n: $*"; timeout 200 env "$@" 2>&1 | grep -v "^ok " | tail -6; echo "exit ${PIPESTATUS[0]}") > "$OUT/ck_$n.log"; }
(FT_SKIP_BENCH=1 FT_SKIP_PEERS=1 FT_SKIP_PYTHON=1 FT_TEST_TIMEOUT=200 timeout 230 bash bench/device_run.sh .bundle > /dev/null 2>&1) &
c pt_cands FLASHTILE_VK_PATHS=vulkan_portable "FLASHTILE_VKPT_TILE=64:64,16,128,4,2,4;256:32,8,128,4,2,4" $T --ft-backend=vulkan -tc='conformance*' &
c pt_cand_d256b FLASHTILE_VK_PATHS=vulkan_portable "FLASHTILE_VKPT_TILE=256:16,16,128,4,2,4" $T --ft-backend=vulkan -tc='conformance*' &
wait
for f in "$OUT"/ck_*.log; do cat "$f"; done
grep -E "conformance:|FAILED|SKIPPED|all steps|failed steps|passed" "$OUT/run.log" "$OUT/tests.log" | head -30
step done
