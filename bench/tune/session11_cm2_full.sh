#!/usr/bin/env bash
# A session-11 experiment (branch wip/cm2-onebody, ~200 s): coopmat2 with one aligned loop body where every K/V tile is
# full (spec id 30, entries `..._full` that take calls with Sk % BLOCK_N == 0), against the peeled form (the ragged
# last tile as a second inlined attend_tile), for issue 5's cm2 cells (d64/d128 non-causal 1.02-1.18x cm2 against
# 1.2x; d256 4k/16k 0.69-0.82x). Conformance on vulkan_coopmat2 with it on (116 cases, of which those with Sk a
# multiple of the tile take `_full`), then f16 d 64/128/256 at 1k/4k/16k, each form in its own process, twice
# interleaved: FLASHTILE_VKCM2_FULL=0 against the default.
# Bundle: .bundle-cm2 (a Vulkan-only build of the branch: git worktree /work/wt-cm2, cmake -DFLASHTILE_CUDA=OFF, then
# bash bench/make_bundle.sh build .bundle, copied to /work/main/.bundle-cm2), run from main.
# run(carry=[".bundle-cm2", ".gl"], timeout_s=300, command='bash bench/tune/session11_cm2_full.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=250 FT_BUNDLE=${FT_BUNDLE:-.bundle-cm2}
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
export FLASHTILE_VK_PATHS=vulkan_coopmat2
conformance vulkan
unset FLASHTILE_VK_PATHS
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128,256 --path vulkan_coopmat2)
for rep in 1 2; do
  vk "peeled.$rep" FLASHTILE_VKCM2_FULL=0 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
  vk "full.$rep" FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
done
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq | head -20
step done
