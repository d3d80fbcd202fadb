#!/usr/bin/env bash
# Provides a glslangValidator that compiles GL_KHR_cooperative_matrix and GL_NV_cooperative_matrix2 shaders, at
# PREFIX/bin/glslangValidator. Order: an existing one at PREFIX (reused across builds), the system's if it passes
# the feature tests, else Debian 13's glslang source package built from source (about 2 minutes on 2 cores).
# The source is fetched with apt-get through a private apt config whose deb-src line reuses the mirror URI this
# machine is already configured with, so no registry host is named here.
set -euo pipefail
prefix=${1:?usage: provision_glslang.sh PREFIX}
here=$(cd "$(dirname "$0")/.." && pwd)
tests=("$here/shaders/feature_test/coopmat_khr.comp" "$here/shaders/feature_test/coopmat2_nv.comp")

passes() {  # passes GLSLANG: compiles every feature-test shader
  local g=$1 t
  for t in "${tests[@]}"; do
    "$g" -V --target-env vulkan1.3 -o /dev/null "$t" >/dev/null 2>&1 || return 1
  done
}

if [ -x "$prefix/bin/glslangValidator" ] && passes "$prefix/bin/glslangValidator"; then
  echo "glslang: reusing $prefix/bin/glslangValidator"; exit 0
fi
if command -v glslangValidator >/dev/null && passes "$(command -v glslangValidator)"; then
  mkdir -p "$prefix/bin"; ln -sf "$(command -v glslangValidator)" "$prefix/bin/glslangValidator"
  echo "glslang: the system's glslangValidator passes the feature tests"; exit 0
fi

echo "glslang: the system has none that compiles cooperative-matrix shaders; building Debian 13's from source"
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mirror=$(awk '/^URIs:/ {for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) {print $i; exit}}' "$f")
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/ && $i ~ /\/debian\/?$/) {print $i; exit}}' /etc/apt/sources.list)
fi
[ -n "$mirror" ] || { echo "glslang: no Debian mirror URI found in this machine's apt sources" >&2; exit 1; }

work="$prefix/src"
rm -rf "$work"; mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/etc"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$work/apt/etc/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/apt/etc/sources.list" -o "Dir::Etc::SourceParts=$work/apt/etc"
          -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache" -o "APT::Sandbox::User=root")
apt-get "${apt_opts[@]}" update -qq
# Upstream sources without Debian's patches: those link SPIRV-Tools through pkg-config, which we build without.
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq glslang >/dev/null &&
  dpkg-source --skip-patches -x glslang_*.dsc glslang-src >/dev/null 2>&1)
srcdir="$work/glslang-src"
[ -d "$srcdir" ] || { echo "glslang: source package did not unpack" >&2; exit 1; }
cmake -S "$srcdir" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DENABLE_OPT=OFF -DGLSLANG_TESTS=OFF -DENABLE_HLSL=OFF -DENABLE_GLSLANG_JS=OFF -DBUILD_SHARED_LIBS=OFF \
  -DGLSLANG_ENABLE_INSTALL=ON >/dev/null
cmake --build "$work/build" --target glslang-standalone -j"$(nproc)" >/dev/null
mkdir -p "$prefix/bin"
cp "$(find "$work/build" -type f -name glslang -perm -u+x | head -n1)" "$prefix/bin/glslangValidator"
rm -rf "$work"
if passes "$prefix/bin/glslangValidator"; then
  echo "glslang: built $("$prefix/bin/glslangValidator" --version | head -n1) at $prefix/bin/glslangValidator"
else
  echo "glslang: the built glslang fails a feature test; shader variants needing it will be dropped" >&2
fi
