#!/usr/bin/env bash
# Session 9, second device call (~300 s), the library at main + the row-group shader as the portable default:
#  1. conformance on every Vulkan path (the row-group shader now the portable default on GPUs), and coopmat2 with Q
#     reloaded per tile from shared memory (qsh) and through its tensor layout (qgl);
#  2. the row-group shader's tiles around call 1's best (R 4 / 4 / 2), each config in its own process, f16 4096;
#  3. coopmat2 with Q out of registers (d256 spills 448 bytes with Q + an f32 O in registers), and at d256 the tiles
#     that freeing Q's 64 registers a thread might allow, 4096 and 16384.
# run(carry=[".bundle", ".gl"], timeout_s=560, command='bash bench/tune/session9_call2.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=480
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
conformance vulkan
for o in qsh qgl; do
  FLASHTILE_VKCM2_OPT=aligned,narrow,fold,$o FLASHTILE_VK_PATHS=vulkan_coopmat2 timeout 150 $B/flashtile_tests \
    --ft-backend=vulkan -tc='conformance*' >> "$OUT/conformance.log" 2>&1
  echo "coopmat2 $o conformance exit $?"
done
grep -E "conformance:|test cases|Status" "$OUT/conformance.log" | tail -6
step "row-group sweep"
args=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --dim 64,128,256 --seq 4096 --path vulkan_portable)
cfgs=(
  "d64=64:16:64:4,d128=64:16:128:8,d256=32:16:128:8"
  "d64=128:16:128:4,d128=128:16:256:8,d256=64:16:256:16"
  "d64=32:16:32:4,d128=32:16:64:8,d256=32:16:128:16"
  "d64=64:32:64:4,d128=64:32:128:8,d256=32:32:128:8"
  "d64=64:16:64:8,d128=64:16:128:16,d256=16:16:64:16"
  "d64=64:8:64:4,d128=64:8:128:8,d256=32:8:128:8"
  "d64=64:16:64:4:1,d128=64:16:128:8:1,d256=32:16:128:8:1"
)
vk tile FT_VK_PORTABLE_FORM=tile $B/flashtile_bench "${args[@]}"
for i in "${!cfgs[@]}"; do
  echo "== rg$((i + 1)) ${cfgs[$i]}" >> "$OUT/vk_out.log"
  vk "rg$((i + 1))" FT_VK_RG_CONFIG="${cfgs[$i]}" FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${args[@]}"
done
grep "pipeline stats attn_portable_rg" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-200 | sort | uniq | head -50
step "coopmat2 Q placement"
a2=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --path vulkan_coopmat2)
vk cm2 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a2[@]}" --dim 64,128,256 --seq 4096
vk cm2qsh FLASHTILE_VKCM2_OPT=aligned,narrow,fold,qsh FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a2[@]}" --dim 64,128,256 --seq 4096
vk cm2qgl FLASHTILE_VKCM2_OPT=aligned,narrow,fold,qgl FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a2[@]}" --dim 64,128,256 --seq 4096
for t in 64,32,128 64,64,128 32,32,128 64,16,128; do
  for o in qsh qgl; do
    vk "cm2_${o}_$t" FLASHTILE_VKCM2_TILE=$t FLASHTILE_VKCM2_OPT=aligned,narrow,fold,$o FLASHTILE_VK_PIPELINE_STATS=1 \
      $B/flashtile_bench "${a2[@]}" --dim 256 --seq 4096,16384
  done
done
vk cm2_d256 $B/flashtile_bench "${a2[@]}" --dim 256 --seq 4096,16384
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-220 | sort | uniq | head -40
step done
