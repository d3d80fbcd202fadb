#!/usr/bin/env bash
# Ran on 4165a87, where FLASHTILE_VKCM2_O16=1 switched coopmat2 to f16 O. That variable is gone since: today the
# f16-O entries need Options::allow_reduced_precision_accumulation (flashtile_bench --reduced-precision).
# Session 12 call 5 (~150 s, nothing to build): d64 f16-O tiles past call 4's 128,64,{128,256}, and the bigger row
# tiles with f32 O as a check that they are an f16-O effect. Each config in its own process.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session12_o16_sweep3.sh')
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=${FT_VK_DEADLINE:-200}
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
O=FLASHTILE_VKCM2_O16=1
S=FLASHTILE_VK_PIPELINE_STATS=1
a() { echo --backend vulkan --dtype f16 --warmup-ms 600 --iters 10 --seq $2 --dim $1 --path vulkan_coopmat2; }
A64=$(a 64 1024,4096,16384)
A128=$(a 128 1024,4096,16384)
vk d64_o16_bm128wg128_nw32 $O $S FLASHTILE_VKCM2_TILE=128,64,128 FLASHTILE_VKCM2_OPT=aligned,narrow32,fold $B/flashtile_bench $A64
vk d64_o16_bm192wg128 $O $S FLASHTILE_VKCM2_TILE=192,64,128 $B/flashtile_bench $A64
vk d64_o16_bm256wg128 $O $S FLASHTILE_VKCM2_TILE=256,64,128 $B/flashtile_bench $A64
vk d64_o16_bm128bn32wg128 $O $S FLASHTILE_VKCM2_TILE=128,32,128 $B/flashtile_bench $A64
vk d64_f32_bm128wg128 $S FLASHTILE_VKCM2_TILE=128,64,128 $B/flashtile_bench $A64
vk d128_f32_bm128wg128 $S FLASHTILE_VKCM2_TILE=128,64,128 $B/flashtile_bench $A128
vk d64_o16_bm128wg128_again $O FLASHTILE_VKCM2_TILE=128,64,128 $B/flashtile_bench $A64
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq
step done
