#!/usr/bin/env bash
# Installs a built tree into a temporary prefix and checks what a user of the installed package gets:
#  - examples/consumer built against it with find_package(flashtile), and run;
#  - the installed bin/flashtile running as installed (its RUNPATH finds the library): --version, info;
#  - pkg-config --cflags --libs flashtile, and a small C program built with them, run;
#  - the Python binding installed by CMake importing and running a CPU attention from outside the source tree, with
#    neither PYTHONPATH at python/ nor FLASHTILE_LIBRARY (it finds the library installed with it);
#  - `pip install ./python` (when pip is there), then the same with FLASHTILE_LIBRARY.
# Usage: scripts/check_install.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: check_install.sh BUILD_DIR}" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
inst="$prefix/install"
cmake --install "$build" --prefix "$inst" >/dev/null
cmake -S "$root/examples/consumer" -B "$prefix/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$inst" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
libdir=$(dirname "$(find "$inst" -name "libflashtile.so*" | head -n1)")
LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}" "$prefix/consumer/consumer"
echo "check_install: find_package(flashtile) consumer built and ran"

# Everything below runs without LD_LIBRARY_PATH: the installed files must find the library themselves.
unset LD_LIBRARY_PATH PYTHONPATH FLASHTILE_LIBRARY
want=$(sed -n 's/.*kVersion\(Major\|Minor\|Patch\) = \([0-9]*\).*/\2/p' "$root/include/flashtile/version.hpp" | paste -sd.)
got=$("$inst/bin/flashtile" --version)
[ "$got" = "flashtile $want" ] || { echo "check_install: flashtile --version printed '$got', expected 'flashtile $want'" >&2; exit 1; }
"$inst/bin/flashtile" info >/dev/null
echo "check_install: installed bin/flashtile runs ($got)"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs flashtile)
[ "$(pkg-config --modversion flashtile)" = "$want" ] || { echo "check_install: pkg-config version mismatch" >&2; exit 1; }
cat >"$prefix/t.c" <<'EOF'
#include <flashtile/flashtile.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  ft_options o = ft_options_default();
  int n = 0;
  if (ft_device_count(&n) != FT_OK || n < 1 || o.has_scale != 0) return 1;
  printf("%s\n", ft_version());
  return 0;
}
EOF
# shellcheck disable=SC2086  # pkg-config's flags are words
cc -std=c99 -o "$prefix/t" "$prefix/t.c" $flags -Wl,-rpath,"$(pkg-config --variable=libdir flashtile)"
[ "$("$prefix/t")" = "$want" ] || { echo "check_install: the pkg-config C program failed" >&2; exit 1; }
echo "check_install: pkg-config flashtile ($flags) built a C program that ran"

# A small CPU attention against a direct computation: two keys, so out = (v0 w0 + v1 w1) / (w0 + w1).
py_check='
import math, os, sys, flashtile
src = os.environ["SRC"]
assert not os.path.abspath(flashtile.__file__).startswith(src + os.sep), flashtile.__file__
q = flashtile.HostArray.from_floats([0.5] * 8, (1, 1, 1, 8), "f32")
k = flashtile.HostArray.from_floats([1.0] * 8 + [0.0] * 8, (1, 2, 1, 8), "f32")
v = flashtile.HostArray.from_floats([2.0] * 8 + [-1.0] * 8, (1, 2, 1, 8), "f32")
out = flashtile.attention(q, k, v, backend="cpu", scale=-0.25).tolist()
w0 = math.exp(-0.25 * 4.0)
want = (2.0 * w0 - 1.0) / (w0 + 1.0)
assert all(abs(x - want) < 1e-6 for x in out), (out, want)
print("%s from %s, library %s" % (flashtile.version(), os.path.dirname(flashtile.__file__), flashtile.library_path()))
'
site=$(dirname "$(find "$inst" -path "*/flashtile/_library.py" | head -n1)")
site=$(dirname "$site")
(cd "$prefix" && SRC="$root" PYTHONPATH="$site" python3 -c "$py_check")
echo "check_install: the CMake-installed Python binding found its library and ran"

if python3 -m pip --version >/dev/null 2>&1; then
  # The binding's build backend is the standard library: no network, no setuptools.
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --no-index --disable-pip-version-check \
    --target "$prefix/pip" "$root/python" >/dev/null
  (cd "$prefix" && SRC="$root" PYTHONPATH="$prefix/pip" FLASHTILE_LIBRARY="$libdir/libflashtile.so.0" \
    python3 -c "$py_check")
  echo "check_install: pip install ./python ran with FLASHTILE_LIBRARY"
else
  echo "check_install: pip is not installed: pip install ./python not checked"
fi
