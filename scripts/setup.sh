#!/usr/bin/env bash
# flashtile set-up for a fresh Debian 12 machine (as root; cmake, g++ and nvcc may already be there).
#   bash scripts/setup.sh run    install what is missing, build, run `flashtile run --check` on the default device
#   bash scripts/setup.sh test   install what is missing, build, run the whole test suite (ctest)
#   bash scripts/setup.sh build  install what is missing and build only
# BUILD_DIR (default: build) and extra CMake arguments in CMAKE_ARGS are honoured.
set -euo pipefail
mode=${1:-build}
case "$mode" in run|test|build) ;; *) echo "usage: $0 run|test|build" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac

# Debian packages: Vulkan headers and loader, volk, lavapipe, validation layers, doctest, and what the glslang
# build needs (dpkg-source, ninja, python3); pkg-config for the installed-package check.
pkgs=(cmake g++ ninja-build python3 pkg-config dpkg-dev libvulkan-dev libvulkan-volk-dev mesa-vulkan-drivers
      vulkan-validationlayers doctest-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A glslang that compiles cooperative-matrix shaders, built into the build tree once and reused afterwards.
bash "$root/scripts/provision_glslang.sh" "$build/_glslang"

jobs=$(nproc)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFLASHTILE_GLSLANG="$build/_glslang/bin/glslangValidator" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$jobs"

case "$mode" in
  run) "$build/flashtile" run --check ;;
  test) ctest --test-dir "$build" --output-on-failure -j1 ;;
esac
