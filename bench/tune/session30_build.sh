#!/usr/bin/env bash
# Session 30's first call, built here (repo root, about 4 minutes on 2 cores): sm90_check of the tree as is (base,
# also the bundle's sm90_check, "land" in vary) and with d64 in lazy mode 4 (l4), plus tile_tests from build/.
# Then: run(carry=[".bundle-s30", ".gl"], command="bash bench/tune/session30_first.sh").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
DIMS=64 bash tests/cuda/build_variants.sh .bundle-s30 'base=' 'l4=-DFT_SM90_LAZY=4'
cp .bundle-s30/sm90_check_base .bundle-s30/sm90_check
cmake --build build -j2 --target tile_tests
cp build/tests/cuda/tile_tests .bundle-s30/
rm -rf .bundle-s30/obj
ls -la .bundle-s30
