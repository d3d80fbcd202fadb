#!/usr/bin/env bash
# Copies what the device needs from a build folder into a lean, git-ignored folder to carry (default .bundle):
# the shared library and the test/bench/CLI executables, flat. SPIR-V is embedded in the library; nothing else
# is needed at run time. Usage: bash bench/make_bundle.sh [BUILD_DIR=build] [BUNDLE_DIR=.bundle]
set -euo pipefail
build=${1:-build}
bundle=${2:-.bundle}
[ -d "$build" ] || { echo "make_bundle: no build folder '$build'" >&2; exit 1; }
rm -rf "$bundle"
mkdir -p "$bundle"
# The library (all its soname links) and every executable we know, wherever the build put them.
find "$build" -path '*/CMakeFiles' -prune -o \( -name 'libflashtile.so*' \) -print | while read -r f; do cp -a "$f" "$bundle/"; done
for exe in flashtile flashtile_tests flashtile_c_api_test flashtile_bench ring_nccl_check cuda_sm80_check cuda_sm80_bwd_check cuda_sm80_serving_check sm90_serving_check tile_tests sm90_check sm90_bwd_check \
           example_vulkan_interop example_basic vulkan_validation_check; do
  f=$(find "$build" -path '*/CMakeFiles' -prune -o -type f -name "$exe" -perm -u+x -print | head -n1)
  [ -n "$f" ] && cp "$f" "$bundle/"
done
ls -la "$bundle"
du -sh "$bundle"
size=$(du -sm "$bundle" | cut -f1)
if [ "$size" -gt 50 ]; then echo "make_bundle: $bundle is ${size} MiB: over the ~50 MiB a run should carry" >&2; fi
