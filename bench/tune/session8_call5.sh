#!/usr/bin/env bash
# Needs the library built from branch wip/vk-portable (the row-group shader was left out of main after this call).
# Session 8, fifth device call (~200 s): the portable Vulkan row-group shader after call 4 found it at half the tile
# shader's speed (253-255 registers and 336-416 bytes of spills at every head dim). Its forms now run only with
# FT_VK_PORTABLE_FORM=rg; FT_VK_RG_CONFIG sweeps its tiles per head dim from one binary. Each config in its own
# process, f16, seqlen 4096, causal and not, with NVIDIA's pipeline statistics (registers, local memory) in
# vk_out.log; the tile shader (the default) first and last as the reference. Then conformance with the rg forms on.
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=400, command='bash bench/tune/session8_call5.sh')
# Table: bench/tune/vk_table.py vk.csv (one process column per tag). Files: main.log vk.csv vk_out.log conformance.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=330
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
args=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 64,128,256 --seq 4096 --path vulkan_portable)
cfgs=(
  "d64=64:16:128:4,d128=64:16:256:8,d256=32:16:256:8"
  "d64=32:16:128:4,d128=32:16:256:16,d256=16:16:128:16"
  "d64=64:32:128:4,d128=32:16:128:4,d256=32:16:256:16"
  "d64=64:16:128:4:1,d128=64:16:256:8:1,d256=32:16:256:8:1"
  "d64=64:16:64:4,d128=64:16:128:8,d256=32:16:128:8"
  "d64=128:32:256:4,d128=32:16:128:8,d256=64:16:256:8"
)
step "portable sweep"
vk tile FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${args[@]}"
for i in "${!cfgs[@]}"; do
  echo "== rg$((i + 1)) ${cfgs[$i]}" >> "$OUT/vk_out.log"
  vk "rg$((i + 1))" FT_VK_PORTABLE_FORM=rg FT_VK_RG_CONFIG="${cfgs[$i]}" FLASHTILE_VK_PIPELINE_STATS=1 \
    $B/flashtile_bench "${args[@]}"
done
vk tile2 $B/flashtile_bench "${args[@]}"
grep "pipeline stats attn_portable" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-200 | head -60
FT_VK_PORTABLE_FORM=rg conformance vulkan
step done
