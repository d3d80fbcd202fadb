#!/usr/bin/env bash
# Ready for session 19's first call (~400 s; carry .bundle .bundle-s19 .gl). session16_first.sh's checks and
# conformance for the landed library (session 18 call 7's causal change never ran them), then issue 4's same-call
# table, with three experiments beside it (all cut per-tile integer work; call 7 showed that it counts):
#   sp: bench/tune/session19_smem_space.patch (branch wip/s19-smem-space). The kernel aligned its shared memory
#     through an integer, so the compiler lost the address space. The O staging's stores compiled to generic ST.E
#     (16 a warp a tile at d64 causal 512, session 18 call 4), and each barrier address needed a generic-to-shared
#     conversion. Aligned by pointer arithmetic, the PTX has st.shared/ld.shared, half the cvta, and 1-7% less static
#     code (d256 the most).
#   fd: bench/tune/session19_fastdiv.patch (branch wip/s19-fastdiv). sm90_tile divides by launch-constant divisors
#     (tile::fastdiv: multiply-high, add, shift) instead of run-time integer divisions (~25 instructions each; the
#     consumer loop still had one or two a tile after call 7). d64's PTX: 134 -> 40 div/rem, the rest off the hot path.
#   spfd: both.
# Build here: bash bench/tune/session19_build.sh (.bundle-s19); .bundle: main's library (cmake --build build -j2 &&
# bash bench/make_bundle.sh build .bundle); .gl: DEVELOPERS.md, Machines.
# run(carry=[".bundle", ".bundle-s19", ".gl"], timeout_s=540, command='bash bench/tune/session19_first.sh')
# Analyse: bench/tune/ab_grid.py grid.log main; bench/tune/parse_grid.py grid.log (main_dispatched: issue 4's
# table). Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
variant_checks .bundle-s19 spfd sp fd spfd
san 150 memcheck .bundle-s19/sm90_check_spfd --tiny --no-bench
conformance cuda
mkdir -p /tmp/s19 && cp "$FT_BUNDLE"/sm90_check /tmp/s19/sm90_check_main && cp .bundle-s19/sm90_check_* /tmp/s19/
ab /tmp/s19 main sp fd spfd
step "third run"
for v in main sp fd spfd; do g /tmp/s19/sm90_check_$v --bench-only --grid --grid-smax 2048; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
