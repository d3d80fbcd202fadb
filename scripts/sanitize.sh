#!/usr/bin/env bash
# CI: the library, the CPU backend and the CPU-only tests (core, conformance_cpu, ring_cpu, c_api) built with AddressSanitizer
# and UndefinedBehaviorSanitizer in their own build directory, CUDA and Vulkan off, then run under them. Only the
# targets those tests need are built (no CLI, benchmark or examples), so it stays a few minutes on two cores.
#   bash scripts/sanitize.sh        BUILD_DIR (default: build-asan) is honoured. Run scripts/setup.sh first (doctest).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-asan}
case "$build" in /*) ;; *) build="$root/$build" ;; esac

# -O1 keeps the reports' stacks readable and the conformance suite fast enough; UB aborts instead of recovering.
flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFLASHTILE_CUDA=OFF -DFLASHTILE_VULKAN=OFF \
  -DFLASHTILE_BENCH=OFF -DFLASHTILE_EXAMPLES=OFF -DFLASHTILE_TESTS=ON \
  -DCMAKE_C_FLAGS_DEBUG="$flags" -DCMAKE_CXX_FLAGS_DEBUG="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target flashtile_tests flashtile_c_api_test

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j1 -R '^(core|conformance_cpu|ring_cpu|c_api)$'
echo "sanitize: core, conformance_cpu, ring_cpu and c_api passed under ASan + UBSan"
