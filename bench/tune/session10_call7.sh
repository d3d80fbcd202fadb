#!/usr/bin/env bash
# Session 10, seventh device call (~110 s, the session's last device minutes): the KHR shader's id 29 options on the
# register-softmax variants (Q straight from global memory, the first K tile's loads before Q's, causal tiles past a
# subgroup's rows skipped), for the d128 1k cells (152.4 / 116.6 against bars of 153.5 / 126.9 in call 6).
# Conformance on vulkan_coopmat with them on (the default), then d64/d128 f16 at 1k/4k/16k, each form in its own
# process, twice interleaved: FLASHTILE_VKCM_OPT=0 (call 6's kernels) against the default.
# run(carry=[".bundle", ".gl"], timeout_s=170, command='bash bench/tune/session10_call7.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=40 FT_VK_DEADLINE=140
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
export FLASHTILE_VK_PATHS=vulkan_coopmat
conformance vulkan
unset FLASHTILE_VK_PATHS
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128 --path vulkan_coopmat)
for rep in 1 2; do
  vk "opt0.$rep" FLASHTILE_VKCM_OPT=0 $B/flashtile_bench "${a[@]}"
  vk "opt7.$rep" $B/flashtile_bench "${a[@]}"
done
step done
