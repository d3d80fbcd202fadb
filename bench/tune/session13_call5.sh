#!/usr/bin/env bash
# Session 13 call 5 (~150 s): issue 4's grid for the landed sm90 kernels (sm90_check_new3) and main's before
# (sm90_check_base), twice interleaved, with cuDNN and FA2 from this call; KHR d128 1k causal in groups of 32 and 24
# against the landed 16.
# run(carry=[".bundle", ".bundle-hg", ".gl"], timeout_s=250, command='bash bench/tune/session13_call5.sh')
# Files: main.log grid.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE H=.bundle-hg
ab $PWD/$H base new3
FT_PEERS_TIMEOUT=90 peers_grid
step "KHR groups"
FT_VK_TIMEOUT=30; FT_VK_DEADLINE=220
P="$B/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 128 --seq 1024 --causal 1 --path vulkan_coopmat"
vk khr_g16 $P
vk khr_g32 FLASHTILE_VK_HEAD_GROUP=32 $P
vk khr_g24 FLASHTILE_VK_HEAD_GROUP=24 $P
vk khr_g16b $P
step done
