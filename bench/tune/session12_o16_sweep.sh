#!/usr/bin/env bash
# Ran on 4165a87, where FLASHTILE_VKCM2_O16=1 switched coopmat2 to f16 O. That variable is gone since: today the
# f16-O entries need Options::allow_reduced_precision_accumulation (flashtile_bench --reduced-precision).
# Session 12 call 3 (~250 s, nothing to build): coopmat2 with O accumulated in f16 (FLASHTILE_VKCM2_O16=1), tiles and
# options per head dim, for the opt-in reduced-precision mode. Call 2 found d256 with Q in registers (no qgl) free of
# spills at 204-214 TFLOP/s. Each config runs in its own process; f32 defaults first as the control.
# run(carry=[".bundle", ".gl"], timeout_s=420, command='bash bench/tune/session12_o16_sweep.sh')
# Files: main.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=330
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
O=FLASHTILE_VKCM2_O16=1
S=FLASHTILE_VK_PIPELINE_STATS=1
a() { echo --backend vulkan --dtype f16 --warmup-ms 600 --iters 10 --seq $2 --dim $1 --path vulkan_coopmat2; }
step "d256"
A256=$(a 256 4096,16384)
vk d256_f32 $B/flashtile_bench $A256
vk d256_o16q $O $S FLASHTILE_VKCM2_OPT=aligned,narrow,fold $B/flashtile_bench $A256
vk d256_o16q_nw8 $O $S FLASHTILE_VKCM2_OPT=aligned,narrow8,fold $B/flashtile_bench $A256
vk d256_o16q_wide $O $S FLASHTILE_VKCM2_OPT=aligned,fold $B/flashtile_bench $A256
vk d256_o16q_lazy $O $S FLASHTILE_VKCM2_OPT=aligned,lazy $B/flashtile_bench $A256
vk d256_o16q_bn64 $O $S FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,64,128 $B/flashtile_bench $A256
vk d256_o16q_bm128 $O $S FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=128,32,256 $B/flashtile_bench $A256
step "d128"
A128=$(a 128 1024,4096,16384)
vk d128_f32 $B/flashtile_bench $A128
vk d128_o16 $O $S $B/flashtile_bench $A128
vk d128_o16_lazy $O $S FLASHTILE_VKCM2_OPT=aligned,lazy $B/flashtile_bench $A128
vk d128_o16_bm128 $O $S FLASHTILE_VKCM2_TILE=128,64,256 $B/flashtile_bench $A128
vk d128_o16_bm128bn128 $O $S FLASHTILE_VKCM2_TILE=128,128,256 $B/flashtile_bench $A128
vk d128_o16_bn64 $O $S FLASHTILE_VKCM2_TILE=64,64,128 $B/flashtile_bench $A128
step "d64"
A64=$(a 64 1024,4096,16384)
vk d64_f32 $B/flashtile_bench $A64
vk d64_o16 $O $S $B/flashtile_bench $A64
vk d64_o16_bm128 $O $S FLASHTILE_VKCM2_TILE=128,64,256 $B/flashtile_bench $A64
vk d64_o16_bm128bn128 $O $S FLASHTILE_VKCM2_TILE=128,128,256 $B/flashtile_bench $A64
vk d64_o16_bn128 $O $S FLASHTILE_VKCM2_TILE=64,128,128 $B/flashtile_bench $A64
vk d128_o16_again $O $B/flashtile_bench $A128
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq
step done
