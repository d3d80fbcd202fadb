#!/usr/bin/env bash
# Session 2, device call 3. Phase A (GPU timing, nothing else running): sm90 variants on the peer grid and cuDNN/FA2
# (sm90_peer.py, same timing method); Vulkan paths and coopmat2 options with a 1 s warm-up (the H200 under Vulkan
# runs at low clocks for the first ~0.5 s of load, seen in call 2's per-call times). Phase B (correctness, in
# parallel): bench/device_run.sh tests and CUDA checks (library defaults), every sm90 variant's full list,
# coopmat2 options through the conformance suite.
# Usage on the device (repo root): bash bench/tune/session2_run3.sh   (carry: .bundle .gl build-var2)
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=70
. "$(dirname "$0")/device_env.sh"
V=build-var2
step "cuda grid"
g $V/sm90_check_base --bench-only --grid
g $V/sm90_check_chain --bench-only --grid --grid-d 64 --grid-smax 4096
g $V/sm90_check_chain --bench-only --grid --grid-d 128 --grid-smax 4096
g $V/sm90_check_s3 --bench-only --grid --grid-d 128 --grid-smax 4096
FT_PEERS_TIMEOUT=100 peers_grid
step "vulkan"
B=.bundle/flashtile_bench
vk() { local tag=$1; shift; if [ $(( $(date +%s) - t0 )) -gt 300 ]; then echo "skipped (time) $tag"; return; fi; echo "# $tag" >> "$OUT/vk.csv"; timeout 150 env "$@" --csv /tmp/vk.csv > /tmp/vk.txt 2>&1; echo "exit $? $tag"; cat /tmp/vk.csv >> "$OUT/vk.csv"; }
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10"
vk main $B $common --path vulkan_coopmat,vulkan_coopmat2 --seq 1024,4096,16384 --shape 1,32768,32768,16,16,128,causal
vk portable $B $common --path vulkan_portable --seq 4096
vk portable_row FLASHTILE_VK_VARIANT=_row_ $B $common --no-grid --path vulkan_portable $(cells "64 128 256" 4096 0)
for o in aligned,narrow,fold narrow,fold; do
  vk "cm2_opt=$o" FLASHTILE_VKCM2_OPT=$o $B $common --no-grid --path vulkan_coopmat2 $(cells "64 128" "4096 16384" "0 1") $(cells 256 4096 "0 1")
done
vk "cm2_opt=anf_64x64" FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,64,128 $B $common --no-grid --path vulkan_coopmat2 $(cells 128 "4096 16384" "0 1")
step "correctness (parallel)"
left=$(( 585 - ($(date +%s) - t0) )); echo "phase B gets $left s"
c() { local n=$1; shift; (echo "== $n: $*"; timeout $((left - 10)) env "$@" 2>&1 | grep -v "^ok " | tail -6; echo "exit ${PIPESTATUS[0]}") > "/tmp/ck/$n.log"; }
T=.bundle/flashtile_tests
(FT_SKIP_BENCH=1 FT_SKIP_PEERS=1 FT_SKIP_PYTHON=1 FT_TEST_TIMEOUT=200 timeout $((left - 5)) bash bench/device_run.sh .bundle > /dev/null 2>&1) &
c sm90_chain $V/sm90_check_chain --no-bench &
c sm90_chain_ctas7 $V/sm90_check_chain --no-bench --ctas 7 &
c sm90_base_pertile $V/sm90_check_base --no-bench --ctas -1 &
c sm90_s3 $V/sm90_check_s3 --no-bench &
c cm2_anf FLASHTILE_VK_PATHS=vulkan_coopmat2 FLASHTILE_VKCM2_OPT=aligned,narrow,fold $T --ft-backend=vulkan -tc='conformance*' &
c memcheck_chain compute-sanitizer --tool memcheck $V/sm90_check_chain --quick --no-bench --ctas 5 &
wait
cat /tmp/ck/*.log > "$OUT/checks.log"; grep -E "^==|exit|passed|FAIL|ERROR" "$OUT/checks.log"
grep -E "FAILED|SKIPPED|all steps|failed steps" "$OUT/run.log" | head -20
step done
