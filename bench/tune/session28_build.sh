#!/usr/bin/env bash
# Session 28's first call, built here (repo root, about a minute): d64's small kernel with chained tiles
# (bench/tune/session27_chain.patch, applied to a scratch copy of the tree, main left alone), as sm90_check variants in
# .bundle-s28 (objects removed), beside main's own bundle in .bundle.
#   chain   non-causal small kernel chained: the next tile's first block (Q·Kᵀ, softmax) under this tile's last
#           P·V, its epilogue after; staged O and the scheduler kept, own blocks off (FT_SM90_SMALL 7th field 2)
#   chainc  the same in both causal and non-causal small kernels (causal loses own blocks and shifted rows)
# Then: run(carry=[".bundle", ".bundle-s28", ".gl"], command="bash bench/tune/session28_first.sh").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cmake --build build -j2 >/dev/null && bash bench/make_bundle.sh build .bundle >/dev/null
tmp=$(mktemp -d)
git archive HEAD | tar -x -C "$tmp"
(cd "$tmp" && git apply "$root/bench/tune/session27_chain.patch")
DIMS=64 bash "$tmp/tests/cuda/build_variants.sh" "$root/.bundle-s28" \
  'chain=-DFT_SM90_SMALL="64:0:4:64:8:1024:2"' 'chainc=-DFT_SM90_SMALL="64:2:4:64:8:1024:2"'
rm -rf .bundle-s28/obj "$tmp"
ls -la .bundle-s28
