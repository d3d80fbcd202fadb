#!/usr/bin/env bash
# Session 14 call 4 (~80 s; carry .bundle and .gl): KHR d128 1k causal, the one KHR cell short of its bar (2.96x cm1,
# bar 3x), under other tiles (FLASHTILE_VKCM_TILE=nsg,block_n,q_regs,prefetch) against the default 8,64,1,1, each
# twice interleaved: no prefetch (8,64,1,0), Q in shared memory (8,64,0,1), 32-key tiles (8,32,1,1), 4 subgroups
# (4,64,1,1).
# run(carry=[".bundle", ".gl"], timeout_s=200, command='bash bench/tune/session14_call4.sh')
# Files: main.log vk.csv vk_out.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
FT_VK_TIMEOUT=30; FT_VK_DEADLINE=150
P="$FT_BUNDLE/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --path vulkan_coopmat"
P="$P --dim 128 --seq 1024 --causal 1"
step "KHR d128 1k causal tiles"
for rep in 1 2; do
  vk default $P
  for t in 8,64,1,0 8,64,0,1 8,32,1,1 4,64,1,1; do vk "t$t" FLASHTILE_VKCM_TILE=$t $P; done
done
grep -h "vk_coopmat" "$OUT/vk.csv" | cut -d'"' -f2 | sort | uniq -c
step done
