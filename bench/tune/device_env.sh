# Sourced by the session scripts here (on the device, repo root): logs everything to $OUT/$FT_LOG, defines
# step (a timed heading), g (one timed grid binary, appended to $OUT/grid.log, killed after $FT_GRID_TIMEOUT s) and
# cells (--shape arguments for flashtile_bench: B = 16384/S, H = 2048/d), unpacks the carried Vulkan loader and
# points the loader and the binaries at it and at the carried .bundle.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/ck
exec > >(tee -a "$OUT/${FT_LOG:-run.log}") 2>&1
t0=$(date +%s); step() { echo; echo "==== $* ($(( $(date +%s) - t0 )) s)"; }
g() { echo "== $*" >> "$OUT/grid.log"; timeout "${FT_GRID_TIMEOUT:-100}" "$@" >> "$OUT/grid.log" 2>&1; echo "exit $?" >> "$OUT/grid.log"; }
cells() { for d in $1; do for s in $2; do for c in $3; do printf -- "--shape %d,%d,%d,%d,%d,%d,%d " $((16384/s)) $s $s $((2048/d)) $((2048/d)) $d $c; done; done; done; }
step env; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export LD_LIBRARY_PATH=$PWD/.bundle PYTHONUNBUFFERED=1
