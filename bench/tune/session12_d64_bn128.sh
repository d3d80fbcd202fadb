#!/usr/bin/env bash
# Session 12 call 7 (~120 s, build first: cmake --build build && bash bench/make_bundle.sh build .bundle): coopmat2 d64
# with 128-key tiles, wider than d (FLASHTILE_VKCM2_TILE accepts block_n a multiple of d since this call), against
# the defaults, f32 O and f16 O (--reduced-precision). d64 non-causal is coopmat2's remaining miss (1.08-1.15x cm2);
# f16 O gained nothing there (call 6), so per-tile softmax work, which 128-key tiles halve per key, is the suspect.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session12_d64_bn128.sh')
# Files: main.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=${FT_VK_DEADLINE:-200}
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
S=FLASHTILE_VK_PIPELINE_STATS=1
A="--backend vulkan --dtype f16 --warmup-ms 600 --iters 10 --seq 1024,4096,16384 --dim 64 --path vulkan_coopmat2"
vk d64_f32 $B/flashtile_bench $A
vk d64_f32_bn128wg256 $S FLASHTILE_VKCM2_TILE=128,128,256 $B/flashtile_bench $A
vk d64_f32_bm64bn128 $S FLASHTILE_VKCM2_TILE=64,128,128 $B/flashtile_bench $A
vk d64_o16 $B/flashtile_bench $A --reduced-precision
vk d64_o16_bn128wg256 $S FLASHTILE_VKCM2_TILE=128,128,256 $B/flashtile_bench $A --reduced-precision
vk d64_o16_bn128wg128 $S FLASHTILE_VKCM2_TILE=128,128,128 $B/flashtile_bench $A --reduced-precision
vk d64_f32_again $B/flashtile_bench $A
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq
step done
