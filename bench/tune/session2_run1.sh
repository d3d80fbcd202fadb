#!/usr/bin/env bash
# Session 2, device call 1 (diagnostics): sm90 variants on the peer grid with cuDNN/FA2 in the same call, ncu of
# sm90 and cuDNN on short cells, Vulkan coopmat/coopmat2 baselines (time-based warm-up) and tile sweeps.
# Usage on the device (repo root): bash bench/tune/session2_run1.sh   (carry: .bundle .gl build-var)
set -u
. "$(dirname "$0")/device_env.sh"
V=build-var
step "cuda grid"
g $V/sm90_check_base --bench-only --grid
g $V/sm90_check_s2 --bench-only --grid --grid-smax 4096
g $V/sm90_check_sh0s2 --bench-only --grid --grid-smax 4096
FT_PEERS_TIMEOUT=150 peers_grid
step "ncu"
N="ncu --clock-control none --launch-skip 4 --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis"
for cell in 128,512,0 128,512,1; do
  echo "######## sm90 $cell" >> "$OUT/ncu.log"
  timeout 60 $N --kernel-name regex:sm90_fwd $V/sm90_check_base --bench-only --cell $cell >> "$OUT/ncu.log" 2>&1
  echo "######## cudnn $cell" >> "$OUT/ncu.log"
  timeout 90 $N --kernel-name regex:'cudnn|sdpa|fmha|flash' python3 tests/cuda/sm90_peer.py --cudnn-only --cell $cell >> "$OUT/ncu.log" 2>&1
done
step "vulkan"
B=.bundle/flashtile_bench
vk() { local tag=$1; shift; echo "# $tag" >> "$OUT/vk.csv"; timeout 120 env "$@" --csv /tmp/vk.csv > /tmp/vk.txt 2>&1; echo "exit $? $tag"; cat /tmp/vk.csv >> "$OUT/vk.csv"; }
common="--backend vulkan --dtype f16 --warmup-ms 300 --iters 10 --no-grid"
vk base FLASHTILE_VK_TIMESTAMPS=1 $B $common --path vulkan_coopmat,vulkan_coopmat2 $(cells "64 128 256" "1024 4096 16384" "0 1")
vk hostclock_khr_d128 FLASHTILE_VK_TIMESTAMPS=0 $B $common --path vulkan_coopmat $(cells "128" "4096 16384" "0 1")
for t in 4,64,1,1 4,32,1,1 8,32,1,1 8,64,1,1 2,64,1,1 4,64,1,0 8,16,1,0 4,16,1,0; do
  vk khr_d128_$t FLASHTILE_VKCM_TILE=$t $B $common --path vulkan_coopmat $(cells 128 4096 "0 1")
done
for t in 4,16,1,0 4,32,1,0 8,16,1,0 2,32,0,0 2,16,0,0; do
  vk khr_d256_$t FLASHTILE_VKCM_TILE=$t $B $common --path vulkan_coopmat $(cells 256 4096 "0 1")
done
for t in 128,64,256 64,64,128 64,32,128 128,32,256 64,64,256 128,128,256; do
  vk cm2_d128_$t FLASHTILE_VKCM2_TILE=$t $B $common --path vulkan_coopmat2 $(cells 128 4096 "0 1")
done
for t in 64,32,128 32,32,128 64,64,128 128,32,256 64,64,256; do
  vk cm2_d256_$t FLASHTILE_VKCM2_TILE=$t $B $common --path vulkan_coopmat2 $(cells 256 4096 "0 1")
done
step done
