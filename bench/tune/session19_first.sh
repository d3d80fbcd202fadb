#!/usr/bin/env bash
# Ready for session 19's first call (~300 s; carry .bundle .bundle-sp .gl). session16_first.sh's checks and
# conformance for the landed library (session 18 call 7's causal change never ran them), then issue 4's same-call
# table, with one experiment beside it:
#   sp: bench/tune/session19_smem_space.patch (branch wip/s19-smem-space). The kernel aligned its shared memory
#     through an integer, so the compiler lost the address space. The O staging's stores compiled to generic ST.E
#     (16 a warp a tile at d64 causal 512, session 18 call 4), and each barrier address needed a generic-to-shared
#     conversion. Aligned by pointer arithmetic, the PTX has st.shared/ld.shared, half the cvta, and 1-7% less static
#     code (d256 the most).
# Build (repo root, main checked out):
#   d=$PWD; git worktree add /tmp/sp HEAD && git -C /tmp/sp apply "$d"/bench/tune/session19_smem_space.patch &&
#     (cd /tmp/sp && bash tests/cuda/build_variants.sh "$d"/.bundle-sp 'sp=') && rm -rf .bundle-sp/obj
#   .bundle: main's library (cmake --build build -j2 && bash bench/make_bundle.sh build .bundle).
# run(carry=[".bundle", ".bundle-sp", ".gl"], timeout_s=420, command='bash bench/tune/session19_first.sh')
# Analyse: bench/tune/ab_grid.py grid.log main; bench/tune/parse_grid.py grid.log (main_dispatched: issue 4's
# table). Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
variant_checks .bundle-sp sp sp
san 150 memcheck .bundle-sp/sm90_check_sp --tiny --no-bench
conformance cuda
mkdir -p /tmp/s19 && cp "$FT_BUNDLE"/sm90_check /tmp/s19/sm90_check_main && cp .bundle-sp/sm90_check_sp /tmp/s19/
ab /tmp/s19 main sp
step "third run"
for v in main sp; do g /tmp/s19/sm90_check_$v --bench-only --grid --grid-smax 2048; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
