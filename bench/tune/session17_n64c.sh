#!/usr/bin/env bash
# Ready for session 17 (~120 s; carry .bundle .bundle-n64c .gl): d64 causal's short kernel with 64-key blocks.
# Why: its 192-row tiles cross 128-key blocks on the diagonal. With own blocks and shifted rows, each consumer's
# slowest path still reads up to one block of masked keys, and 64-key blocks halve that. Session 9 rejected 64-key
# blocks at d64 (0.90-1.00x causal), before Q prefetch, shifted rows and the TMA store of O.
# Build here first:
#   cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
#   bash tests/cuda/build_variants.sh .bundle-n64c 'n64c=-DFT_SM90_SHORT_N64C=64' && rm -rf .bundle-n64c/obj
# run(carry=[".bundle", ".bundle-n64c", ".gl"], timeout_s=300, command='bash bench/tune/session17_n64c.sh')
# Checks: the variant's sm90_check, and its racecheck --tiny. Then d64's grid, land (the bundle's sm90_check) against
# n64c, three times interleaved. Analyse: bench/tune/ab_grid.py grid.log land. Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
mkdir -p /tmp/v && cp "$FT_BUNDLE"/sm90_check /tmp/v/sm90_check_land && cp .bundle-n64c/sm90_check_n64c /tmp/v/
step "checks"
ck /tmp/v/sm90_check_n64c --no-bench
san 150 racecheck /tmp/v/sm90_check_n64c --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log"
step "d64 grid A/B"
for rep in 1 2 3; do for v in land n64c; do g /tmp/v/sm90_check_$v --bench-only --grid --grid-d 64; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
