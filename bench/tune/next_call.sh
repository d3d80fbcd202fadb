#!/usr/bin/env bash
# NOT RUN YET: the next tuning call planned at the end of session 2 (DEVELOPERS.md, status). Build first, here:
#   tests/cuda/build_variants.sh build-var3 'base=' 'chain160=-DFT_SM90_CFG128="2:160:2:1:2"' && rm -rf build-var3/obj
#   bash bench/make_bundle.sh build .bundle
# then run(carry=[".bundle", ".gl", "build-var3"], timeout_s=540, command='bash bench/tune/next_call.sh').
# Keeps the whole call under ~450 s: a call that hits the limit loses the logs still in /tmp.
set -u
FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
V=build-var3
step "cuda grid (d128)"
g $V/sm90_check_base --bench-only --grid --grid-d 128
g $V/sm90_check_chain160 --bench-only --grid --grid-d 128
timeout 80 python3 tests/cuda/sm90_peer.py --grid --cudnn-only >> "$OUT/grid.log" 2>&1
step "correctness of the variant (log copied now, not at the end)"
timeout 90 $V/sm90_check_chain160 --no-bench 2>&1 | grep -v "^ok " | tail -4 | tee "$OUT/checks.log"
step "vulkan (1 s warm-ups)"
B=.bundle/flashtile_bench
vk() { local tag=$1; shift; echo "# $tag" >> "$OUT/vk.csv"; timeout 90 env "$@" --csv /tmp/vk.csv >> "$OUT/vk_out.log" 2>&1; echo "exit $? $tag"; cat /tmp/vk.csv >> "$OUT/vk.csv"; }
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 --no-grid"
for t in 4,64,1,1 8,32,1,1 4,32,1,1 4,64,1,0; do
  vk "khr_d64_$t" FLASHTILE_VKCM_TILE=$t $B $common --path vulkan_coopmat $(cells 64 4096 "0 1")
done
for t in "128:32,16,128,4,2,4" "128:32,32,64" "128:32,32,128" "128:64,16,128,4,2,4"; do
  vk "portable_$t" "FLASHTILE_VKPT_TILE=$t" $B $common --path vulkan_portable $(cells 128 4096 0)
done
vk cm2_d128_aligned_times FT_BENCH_TIMES=1 FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,64,128 $B $common --path vulkan_coopmat2 $(cells 128 4096 "0 1")
vk cm2_d256_1k_times FT_BENCH_TIMES=1 $B $common --path vulkan_coopmat2 $(cells 256 "1024 4096" 0)
step done
