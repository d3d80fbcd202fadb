#!/usr/bin/env bash
# Session 23 call 9 (~230 s; build: cmake --build build -j2 && bash bench/make_bundle.sh build .bundle on main at
# 5ba0895 (the landed kernels, session 23), and .bundle-s23/sm90_check_main from a worktree of 2c4face (session 22's
# kernels, mode 2) through tests/cuda/build_variants.sh; carry .bundle .bundle-s23 .gl). Issue 4's table again from
# main's own build: the whole grid twice interleaved, main (session 22) against land (session 23), then the peers.
# Files: main.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check
land_ab .bundle-s23/sm90_check_main
step done
