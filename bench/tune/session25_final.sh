#!/usr/bin/env bash
# Session 25's last call (~330 s; carry .bundle .bundle-old .gl). Build: cmake --build build -j2 && bash
# bench/make_bundle.sh build .bundle (main with this session's landings); .bundle-old/sm90_check_old:
# tests/cuda/build_variants.sh .bundle-old 'old=' run from a worktree at a021e1c (session 24's kernels).
# The library's checks, then issue 4's table: the whole grid three times, old and land interleaved, then the peers.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
library_checks
mkdir -p /tmp/land && cp .bundle-old/sm90_check_old /tmp/land/sm90_check_old && cp "$FT_BUNDLE"/sm90_check /tmp/land/sm90_check_land
ab3 /tmp/land old land
step done
