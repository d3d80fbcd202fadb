#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
B=.bundle
export LD_LIBRARY_PATH=$PWD/$B FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
echo "== backward (vulkan_coopmat, vulkan_portable)"
timeout 150 $B/flashtile_bench --backend vulkan --path vulkan_coopmat,vulkan_portable --backward --dtype f16 --dim 128 --seq 4096,16384 --iters 5 --csv $OUT/vk_bwd.csv 2>&1 | tee $OUT/vk.log | grep -E "vulkan " | cut -c1-200
echo "== forward (the bars' base)"
timeout 100 $B/flashtile_bench --backend vulkan --path vulkan_coopmat,vulkan_portable --dtype f16 --dim 128 --seq 4096,16384 --iters 5 --csv $OUT/vk_fwd.csv 2>&1 | tee -a $OUT/vk.log | grep -E "vulkan " | cut -c1-200
