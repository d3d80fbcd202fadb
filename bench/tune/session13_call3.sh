#!/usr/bin/env bash
# Session 13 call 3 (~540 s), the landing call: sm90 head groups of 8 for 8-64 m-blocks a head with one group kept
# apart in sm90_tile (sm90_check_new3, standalone build of this tree) against main's kernels (sm90_check_base);
# KHR causal launches in groups of 16 pairs by default against one group of all (FLASHTILE_VK_HEAD_GROUP=0) and 8;
# conformance on the KHR path; issue 5's table with flashtile CUDA and cuDNN f16 from this call.
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".bundle-hg", ".gl"], timeout_s=595, command='bash bench/tune/session13_call3.sh')
# Files: main.log checks.log conformance.log grid.log vk.csv vk_out.log peers_f16.log clocks.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE H=.bundle-hg
step "sm90 checks"
ck $H/sm90_check_new3 --no-bench
ck $H/sm90_check_new3 --no-bench --ctas -1
san 60 racecheck $H/sm90_check_new3 --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|ERROR|SUMMARY" "$OUT/checks.log"
step "conformance on KHR (its launch order changed; call 2 ran every Vulkan path)"
timeout 120 $B/flashtile_tests --ft-backend=vulkan --ft-path=vulkan_coopmat -tc='conformance*' > "$OUT/conformance.log" 2>&1
echo "KHR conformance exit $?"
grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
ab $PWD/$H base new3
step "KHR head groups"
K="$B/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 500 --iters 10 --causal 1 --path vulkan_coopmat"
FT_VK_TIMEOUT=40; FT_VK_DEADLINE=300
vk khr_g16 $K --dim 64,128,256 --seq 1024,4096
vk khr_all FLASHTILE_VK_HEAD_GROUP=0 $K --dim 64,128,256 --seq 1024,4096
vk khr_g8 FLASHTILE_VK_HEAD_GROUP=8 $K --dim 64,128,256 --seq 1024,4096
vk khr_g16b $K --dim 64,128,256 --seq 1024,4096
vk khr_allb FLASHTILE_VK_HEAD_GROUP=0 $K --dim 64,128,256 --seq 1024,4096
issue5_table 330
step done
