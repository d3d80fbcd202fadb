#!/usr/bin/env bash
# Builds session 21's first call (bench/tune/session21_first.sh) from branch wip/s21-short-cluster (~3 min on 2
# cores; needs a configured build/: bash scripts/setup.sh build):
#   .bundle-s21/sm90_check_{base,sc1k,sc2k}: main's kernels (the branch's defaults build the same cubins), and
#   d128 non-causal's short kernel clustered past 1024 / 2048 keys (-DFT_SM90_SHORT_CLUSTER);
#   .bundle: the branch's library (its default: no short clusters), for the checks.
# Rejected (call 1: 4k 0.974/0.982x); the code: session21_short_cluster.patch (against c765133).
set -euo pipefail
rm -rf .bundle-s21
bash tests/cuda/build_variants.sh .bundle-s21 'base=' 'sc1k=-DFT_SM90_SHORT_CLUSTER=1024' \
  'sc2k=-DFT_SM90_SHORT_CLUSTER=2048'
rm -rf .bundle-s21/obj
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
