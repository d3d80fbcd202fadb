#!/usr/bin/env bash
# Builds session 19's first-call variants (bench/tune/session19_first.sh) into .bundle-s19, from main with the
# session's patches applied in worktrees: sp (session19_smem_space.patch), fd (session19_fastdiv.patch), spfd (both).
# Run from the repo root with main checked out (~2 min on 2 cores).
set -euo pipefail
root=$PWD
build() {  # build NAME PATCH...
  local name=$1 wt=/tmp/s19-$1; shift
  git worktree remove --force "$wt" 2>/dev/null || true
  git worktree add -q --detach "$wt" HEAD
  for p in "$@"; do git -C "$wt" apply "$root/bench/tune/$p"; done
  (cd "$wt" && bash tests/cuda/build_variants.sh "$root/.bundle-s19" "$name=")
  git worktree remove --force "$wt"
}
build sp session19_smem_space.patch
build fd session19_fastdiv.patch
build spfd session19_smem_space.patch session19_fastdiv.patch
rm -rf "$root/.bundle-s19/obj"
ls -la "$root/.bundle-s19"
