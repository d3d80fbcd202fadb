#!/usr/bin/env bash
# Session 2, device call 2: sm90 variants (chained tiles with double-buffered Q; 3-stage rings) on the peer grid with
# cuDNN/FA2 in the same call; Vulkan per-call time dumps (the bimodal medians), coopmat2 options, KHR d64 tiles,
# the portable tile shader; then correctness for every variant (sm90_check full list, Vulkan conformance per option).
# Usage on the device (repo root): bash bench/tune/session2_run2.sh   (carry: .bundle .gl build-var2)
set -u
. "$(dirname "$0")/device_env.sh"
V=build-var2
step "cuda grid"
g $V/sm90_check_base --bench-only --grid
g $V/sm90_check_chain --bench-only --grid --grid-d 64
g $V/sm90_check_chain --bench-only --grid --grid-d 128
g $V/sm90_check_s3 --bench-only --grid
FT_PEERS_TIMEOUT=150 peers_grid
step "vulkan"
B=.bundle/flashtile_bench
vk() { local tag=$1; shift; echo "# $tag" >> "$OUT/vk.csv"; timeout 120 env "$@" --csv /tmp/vk.csv >> "$OUT/vk_times.log" 2>&1; echo "exit $? $tag"; cat /tmp/vk.csv >> "$OUT/vk.csv"; }
common="--backend vulkan --dtype f16 --warmup-ms 300 --iters 10 --no-grid"
vk times FT_BENCH_TIMES=1 $B --backend vulkan --dtype f16 --warmup-ms 300 --iters 30 --no-grid --path vulkan_coopmat,vulkan_coopmat2 $(cells "128 256" 4096 0)
vk times_sets1 FT_BENCH_TIMES=1 $B --backend vulkan --dtype f16 --warmup-ms 300 --iters 30 --sets 1 --no-grid --path vulkan_coopmat,vulkan_coopmat2 $(cells "128 256" 4096 0)
for o in "" aligned aligned,narrow,fold aligned,lazy "aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,64,128" "aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,32,256" alignhint narrow,fold; do
  vk "cm2_opt=$o" FLASHTILE_VKCM2_OPT=$o $B $common --path vulkan_coopmat2 $(cells "64 128 256" 4096 "0 1")
done
for t in 4,64,1,1 8,32,1,1 4,32,1,1 4,64,1,0 2,64,1,1 8,16,1,1; do
  vk khr_d64_$t FLASHTILE_VKCM_TILE=$t $B $common --path vulkan_coopmat $(cells 64 4096 "0 1")
done
vk portable_default $B $common --path vulkan_portable $(cells "64 128 256" 4096 "0 1")
vk portable_row FLASHTILE_VK_VARIANT=_row_ $B $common --path vulkan_portable $(cells "64 128 256" 4096 0)
for t in "128:32,16,128,4,2,4;64:64,16,128,4,2,4;256:16,16,64" "128:32,32,64;64:64,32,128;256:32,8,128,4,2,4" "128:32,32,128" "128:64,16,128,4,2,4"; do
  vk "portable_$t" "FLASHTILE_VKPT_TILE=$t" $B $common --path vulkan_portable $(cells "64 128 256" 4096 0)
done
step "correctness"
c() { local n=$1; shift; (echo "== $n: $*"; timeout 200 env "$@" 2>&1 | tail -4; echo "exit $?") > "/tmp/ck/$n.log"; }
T=.bundle/flashtile_tests
c sm90_base $V/sm90_check_base --no-bench &
c sm90_chain $V/sm90_check_chain --no-bench &
c sm90_chain_ctas7 $V/sm90_check_chain --no-bench --ctas 7 &
c sm90_s3 $V/sm90_check_s3 --no-bench &
c cm2_aligned FLASHTILE_VK_PATHS=vulkan_coopmat2 FLASHTILE_VKCM2_OPT=aligned $T --ft-backend=vulkan -tc='conformance*' &
c cm2_anf FLASHTILE_VK_PATHS=vulkan_coopmat2 FLASHTILE_VKCM2_OPT=aligned,narrow,fold $T --ft-backend=vulkan -tc='conformance*' &
c cm2_lazy FLASHTILE_VK_PATHS=vulkan_coopmat2 FLASHTILE_VKCM2_OPT=aligned,lazy $T --ft-backend=vulkan -tc='conformance*' &
c portable FLASHTILE_VK_PATHS=vulkan_portable $T --ft-backend=vulkan -tc='conformance*' &
wait
cat /tmp/ck/*.log > "$OUT/checks.log"; cat "$OUT/checks.log"
(timeout 100 compute-sanitizer --tool memcheck $V/sm90_check_chain --quick --no-bench --ctas 5 2>&1 | tail -3) >> "$OUT/checks.log"
step done
