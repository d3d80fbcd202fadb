#!/usr/bin/env bash
# Ran on 4165a87, where FLASHTILE_VKCM2_O16=1 switched coopmat2 to f16 O. That variable is gone since: today the
# f16-O entries need Options::allow_reduced_precision_accumulation (flashtile_bench --reduced-precision).
# Session 12 call 4 (~230 s, nothing to build): f16-O coopmat2 tiles around call 3's best per head dim (d64
# 128,64,256; d128 64,128,128; d256 64,64,128 with Q in registers). Each config in its own process.
# run(carry=[".bundle", ".gl"], timeout_s=420, command='bash bench/tune/session12_o16_sweep2.sh')
# Files: main.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=${FT_VK_DEADLINE:-330}
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
O=FLASHTILE_VKCM2_O16=1
S=FLASHTILE_VK_PIPELINE_STATS=1
a() { echo --backend vulkan --dtype f16 --warmup-ms 600 --iters 10 --seq $2 --dim $1 --path vulkan_coopmat2; }
step "d64"
A64=$(a 64 1024,4096,16384)
vk d64_o16_bm128 $O $S FLASHTILE_VKCM2_TILE=128,64,256 $B/flashtile_bench $A64
vk d64_o16_bm128bn32 $O $S FLASHTILE_VKCM2_TILE=128,32,256 $B/flashtile_bench $A64
vk d64_o16_bm256 $O $S FLASHTILE_VKCM2_TILE=256,64,256 $B/flashtile_bench $A64
vk d64_o16_bm128wg128 $O $S FLASHTILE_VKCM2_TILE=128,64,128 $B/flashtile_bench $A64
vk d64_o16_bm128_wide $O $S FLASHTILE_VKCM2_TILE=128,64,256 FLASHTILE_VKCM2_OPT=aligned,fold $B/flashtile_bench $A64
vk d64_o16_bm128_nw32 $O $S FLASHTILE_VKCM2_TILE=128,64,256 FLASHTILE_VKCM2_OPT=aligned,narrow32,fold $B/flashtile_bench $A64
step "d128"
A128=$(a 128 1024,4096,16384)
vk d128_o16 $O $S $B/flashtile_bench $A128
vk d128_o16_wide $O $S FLASHTILE_VKCM2_OPT=aligned,fold $B/flashtile_bench $A128
vk d128_o16_nw32 $O $S FLASHTILE_VKCM2_OPT=aligned,narrow32,fold $B/flashtile_bench $A128
vk d128_o16_bm128wg128 $O $S FLASHTILE_VKCM2_TILE=128,64,128 $B/flashtile_bench $A128
vk d128_o16_bm128bn128_nw32 $O $S FLASHTILE_VKCM2_TILE=128,128,256 FLASHTILE_VKCM2_OPT=aligned,narrow32,fold $B/flashtile_bench $A128
step "d256"
A256=$(a 256 4096,16384)
vk d256_o16q_bn64 $O $S FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,64,128 $B/flashtile_bench $A256
vk d256_o16q_bn64_wide $O $S FLASHTILE_VKCM2_OPT=aligned,fold FLASHTILE_VKCM2_TILE=64,64,128 $B/flashtile_bench $A256
vk d256_o16q_bn64_nw8 $O $S FLASHTILE_VKCM2_OPT=aligned,narrow8,fold FLASHTILE_VKCM2_TILE=64,64,128 $B/flashtile_bench $A256
vk d256_o16q_bn128 $O $S FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,128,128 $B/flashtile_bench $A256
vk d256_o16q_bm128bn64 $O $S FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=128,64,256 $B/flashtile_bench $A256
vk d256_o16q_bn64_again $O FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,64,128 $B/flashtile_bench $A256
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq
step done
