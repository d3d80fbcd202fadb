#!/usr/bin/env bash
set -u
FT_BUNDLE=.bundle_dec . bench/tools/device_lib.sh
B=.bundle_dec
export FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so
step "conformance serving + decode-shaped forward (cuda)"
timeout 100 $B/flashtile_tests --ft-backend=cuda -tc='conformance serving*' > "$OUT/conf.log" 2>&1; echo "exit $?"
grep -E "test cases|assertions|Status|ERROR|FAILED" "$OUT/conf.log" | head -12
step "decode peers"
timeout 100 python3 bench/peers.py --seq 3 --dtype bf16 --peers fa2,cudnn --flashtile-paths cuda_sm90 \
  --shape 1,1,65536,32,8,128 --shape 16,1,8192,32,8,128 --shape 64,1,4096,32,8,128 --shape 128,1,2048,32,8,128 \
  --shape 8,16,32768,32,8,128,1 --out "$OUT/peers" > "$OUT/peers.log" 2>&1; echo "exit $?"
grep -A8 "^ratios" "$OUT/peers.log"
step "paged vs contiguous"
timeout 90 python3 bench/decode_paged.py --paths cuda_sm90 --out "$OUT" > "$OUT/paged.log" 2>&1; echo "exit $?"
grep -v "^$" "$OUT/paged.log" | tail -22
# vk/bwd-speed
FT_BUNDLE=.bundle_vkbwd
export LD_LIBRARY_PATH=$PWD/.bundle_vkbwd
V=.bundle_vkbwd
for path in vulkan_coopmat vulkan_portable; do
  step "conformance backward $path"
  timeout 100 $V/flashtile_tests --ft-backend=vulkan --ft-path=$path -tc='conformance backward*,conformance variants: the backward*' > "$OUT/vk_conf_$path.log" 2>&1; echo "exit $?"
  grep -E "test cases|assertions|Status|ERROR|FAILED" "$OUT/vk_conf_$path.log" | head -8
done
export FT_VK_TIMEOUT=100 FT_VK_DEADLINE=575
step "vulkan backward / forward speed"
vk "bwd" FLASHTILE_VK_PIPELINE_STATS=1 $V/flashtile_bench --backend vulkan --path vulkan_coopmat,vulkan_portable --backward --dtype f16 --dim 64,128 --seq 4096,16384 --iters 5 --warmup-ms 1000
vk "fwd" $V/flashtile_bench --backend vulkan --path vulkan_coopmat,vulkan_portable --dtype f16 --dim 128 --seq 4096,16384 --iters 5 --warmup-ms 1000
grep -E "^# |vulkan" "$OUT/vk.csv" | cut -c1-190 | head -40
grep -i -E "spill|scratch|private" "$OUT/vk_out.log" | head -10
