#!/usr/bin/env bash
# Session 13 call 2 (~470 s): main with sm90 causal head groups of 8 by default (Sm90Config::head_group) and
# coopmat2 d128 f32 non-causal on 128,128,256, plus the Vulkan launch order in groups of heads (push constant
# head_group, FLASHTILE_VK_HEAD_GROUP) as an experiment.
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle; .bundle-hg/sm90_check_new is the
# standalone build of this tree (cmake -S tests/cuda -B /tmp/sa ...), sm90_check_base main's kernels before it.
# run(carry=[".bundle", ".bundle-hg", ".gl"], timeout_s=590, command='bash bench/tune/session13_call2.sh')
# Files: main.log checks.log conformance.log grid.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE H=.bundle-hg
step "sm90 checks"
ck $H/sm90_check_new --no-bench
ck $H/sm90_check_new --no-bench --ctas -1
san 60 racecheck $H/sm90_check_new --tiny --no-bench --ctas -1
grep -E "^==|^exit|passed|FAIL|ERROR|SUMMARY" "$OUT/checks.log"
FT_CONF_TIMEOUT=240 conformance vulkan
ab $PWD/$H base new
FT_PEERS_TIMEOUT=100 peers_grid
step "vulkan launch order and coopmat2 d128 tiles"
FT_VK_TIMEOUT=40; FT_VK_DEADLINE=540
K="$B/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 500 --iters 10"
vk khr_hg_all $K --dim 128 --seq 1024,4096 --causal 1 --path vulkan_coopmat
vk khr_hg16 FLASHTILE_VK_HEAD_GROUP=16 $K --dim 128 --seq 1024,4096 --causal 1 --path vulkan_coopmat
vk khr_hg64 FLASHTILE_VK_HEAD_GROUP=64 $K --dim 128 --seq 1024,4096 --causal 1 --path vulkan_coopmat
vk cm2_c_perhead $K --dim 64,128 --seq 1024,4096 --causal 1 --path vulkan_coopmat2
vk cm2_c_hg16 FLASHTILE_VK_ROWS_OUTER=1 FLASHTILE_VK_HEAD_GROUP=16 $K --dim 64,128 --seq 1024,4096 --causal 1 --path vulkan_coopmat2
vk cm2_nc_new $K --dim 128 --seq 1024,4096,16384 --causal 0 --path vulkan_coopmat2
vk cm2_nc_old FLASHTILE_VKCM2_TILE=64,128,128 $K --dim 128 --seq 1024,4096,16384 --causal 0 --path vulkan_coopmat2
vk cm2_nc_new2 $K --dim 128 --seq 1024,4096,16384 --causal 0 --path vulkan_coopmat2
vk cm2_nc_old2 FLASHTILE_VKCM2_TILE=64,128,128 $K --dim 128 --seq 1024,4096,16384 --causal 0 --path vulkan_coopmat2
vk khr_hg_all2 $K --dim 128 --seq 1024,4096 --causal 1 --path vulkan_coopmat
vk khr_hg16_2 FLASHTILE_VK_HEAD_GROUP=16 $K --dim 128 --seq 1024,4096 --causal 1 --path vulkan_coopmat
step done
