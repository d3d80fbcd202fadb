#!/usr/bin/env bash
# Session 29's first call, built here (repo root, about 3 minutes on 2 cores): sm90_check variants of d64's small
# kernel with its consumers in two groups of two (bench/tune/session29_groups.patch: Sm90Config::small_groups,
# Sm90Kind::grouped; each group a CTA of its own in all but the producer warpgroup: its own tiles from the scheduler,
# Q, K/V ring of 4 stages and staged O), beside land (main's kernels: with the patch, kernels without groups are
# byte-identical to 37a726f's at d64 and d128, tests/cuda/cubin_text_diff.py; d256's non-causal main kernel has 15
# instructions reordered).
#   g2   every small kernel grouped, its limits unchanged (causal to 2048 keys, non-causal to 1024)
#   g2x  the same to 4096 keys, causal and not (the short kernel takes over above)
# Call 1 built these from the working tree before the patch took its final form, as -DFT_SM90_SMALL_GROUPS="2:2:4:0"
# (g2) and "2:2:4:4096" (g2x) ("groups:consumers a group:stages:max_sk" then); the flags below build the same kernels.
# The patch applies to 37a726f in a scratch copy of the tree, main left alone.
# Then: run(carry=[".bundle-s29", ".gl"], command="bash bench/tune/session29_first.sh").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tmp=$(mktemp -d)
git archive 37a726f | tar -x -C "$tmp"
(cd "$tmp" && git apply "$root/bench/tune/session29_groups.patch")
DIMS=64 bash "$tmp/tests/cuda/build_variants.sh" .bundle-s29 'land=-DFT_SM90_SMALL_GROUPS="64:1:1:1073741824"' \
  'g2=-DFT_SM90_SMALL_GROUPS="64:2:2:1"' 'g2x=-DFT_SM90_SMALL_GROUPS="64:2:2:1" -DFT_SM90_SMALL="64:2:4:64:8:4096"'
cp .bundle-s29/sm90_check_land .bundle-s29/sm90_check
rm -rf .bundle-s29/obj "$tmp"
ls -la .bundle-s29
