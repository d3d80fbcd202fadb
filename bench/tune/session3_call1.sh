#!/usr/bin/env bash
# Session 3, device call 1 (carry: .bundle .gl build-var3). Phase A (timing, GPU alone): sm90 base vs chained tiles
# at N=160 on the d128 grid with cuDNN/FA2 in the same call; KHR d64 tiles, portable tiles, coopmat2 d128 `aligned`
# and d256 1k with per-call times. Phase B (correctness, in parallel): bench/device_run.sh tests (conformance of
# every path incl. the unaligned-view test, core suites, tile tests, CUDA checks, sanitizers) and chain160's checks.
# As run; its bare `wait` below hung past every job's end until the call's limit (device_env.sh): do not copy it.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=70 FT_VK_DEADLINE=330
. "$(dirname "$0")/device_env.sh"
V=build-var3
step "cuda grid (d128)"
g $V/sm90_check_base --bench-only --grid --grid-d 128
g $V/sm90_check_chain160 --bench-only --grid --grid-d 128
FT_PEERS_TIMEOUT=90 peers_grid
step "vulkan (1 s warm-ups)"
B=.bundle/flashtile_bench
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 --no-grid"
for t in 4,64,1,1 8,32,1,1 4,32,1,1 4,64,1,0; do
  vk "khr_d64_$t" FLASHTILE_VKCM_TILE=$t $B $common --path vulkan_coopmat $(cells 64 4096 "0 1")
done
for t in "128:32,16,128,4,2,4" "128:32,32,64" "128:32,32,128" "128:64,16,128,4,2,4"; do
  vk "portable_$t" "FLASHTILE_VKPT_TILE=$t" $B $common --path vulkan_portable $(cells 128 4096 0)
done
vk cm2_d128_aligned_times FT_BENCH_TIMES=1 FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,64,128 $B $common --path vulkan_coopmat2 $(cells 128 4096 "0 1")
vk cm2_d256_1k_times FT_BENCH_TIMES=1 $B $common --path vulkan_coopmat2 $(cells 256 "1024 4096" 0)
step "correctness (parallel)"
left=$(( 520 - ($(date +%s) - t0) )); echo "phase B gets $left s"
c() { local n=$1; shift; (echo "== $n: $*"; timeout $((left - 10)) env "$@" 2>&1 | grep -v "^ok " | tail -6; echo "exit ${PIPESTATUS[0]}") > "/tmp/ck/$n.log"; }
(FT_SKIP_BENCH=1 FT_SKIP_PEERS=1 FT_SKIP_PYTHON=1 FT_TEST_TIMEOUT=200 timeout $((left - 5)) bash bench/device_run.sh .bundle > /dev/null 2>&1) &
c chain160 $V/sm90_check_chain160 --no-bench &
c chain160_ctas7 $V/sm90_check_chain160 --no-bench --ctas 7 &

wait
cat /tmp/ck/*.log > "$OUT/checks.log"; grep -E "^==|exit|passed|FAIL|ERROR" "$OUT/checks.log"
grep -E "FAILED|SKIPPED|all steps|failed steps" "$OUT/run.log" | head -20
step done
