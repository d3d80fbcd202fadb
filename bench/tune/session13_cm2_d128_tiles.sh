#!/usr/bin/env bash
# A session-13 experiment (~150 s, nothing to build: main's .bundle). coopmat2 d128 non-causal by default (f32 O) is
# at 1.03-1.13x cm2 (bar 1.2x). Session 12 calls 7-8 found d64's win in key tiles wider than d (128,128,128: fewer
# softmax steps a key), which FLASHTILE_VKCM2_TILE allows since then; d128's f32 tiles were swept before that rule
# was lifted only up to block_n = d. Each config in its own process, the default first and last.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session13_cm2_d128_tiles.sh')
# Files: main.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=${FT_VK_DEADLINE:-220}
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
S=FLASHTILE_VK_PIPELINE_STATS=1
A="--backend vulkan --dtype f16 --warmup-ms 600 --iters 10 --seq 1024,4096,16384 --dim 128 --path vulkan_coopmat2"
vk d128_f32 $B/flashtile_bench $A
vk d128_f32_64_256_128 $S FLASHTILE_VKCM2_TILE=64,256,128 $B/flashtile_bench $A
vk d128_f32_128_128_256 $S FLASHTILE_VKCM2_TILE=128,128,256 $B/flashtile_bench $A
vk d128_f32_128_256_256 $S FLASHTILE_VKCM2_TILE=128,256,256 $B/flashtile_bench $A
vk d128_f32_64_128_128_nw32 $S FLASHTILE_VKCM2_OPT=aligned,narrow32,fold $B/flashtile_bench $A
vk d128_o16_128_128_256 $S FLASHTILE_VKCM2_TILE=128,128,256 $B/flashtile_bench $A --reduced-precision
vk d128_o16_64_256_128 $S FLASHTILE_VKCM2_TILE=64,256,128 $B/flashtile_bench $A --reduced-precision
vk d128_f32_again $B/flashtile_bench $A
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq
step done
