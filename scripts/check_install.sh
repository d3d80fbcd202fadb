#!/usr/bin/env bash
# Installs a built tree into a temporary prefix, builds examples/consumer against it with find_package(flashtile),
# and runs the consumer. Usage: scripts/check_install.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: check_install.sh BUILD_DIR}" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix/install" >/dev/null
cmake -S "$root/examples/consumer" -B "$prefix/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix/install" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
libdir=$(dirname "$(find "$prefix/install" -name "libflashtile.so*" | head -n1)")
LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}" "$prefix/consumer/consumer"
echo "check_install: find_package(flashtile) consumer built and ran"
