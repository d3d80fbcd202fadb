#!/usr/bin/env bash
# Session 26's ninth call (~230 s; carry .bundle .bundle-oplib .gl). .bundle: main at c1e374d. .bundle-oplib: main
# at 1712fc6 (cmake --build build -j2 && bash bench/make_bundle.sh build .bundle-oplib): the shared O buffer handed
# between consumers one 64-column block at a time (call 8's ncu: d256 causal 512's consumers waited for it in 13% of
# their stall samples).
# The library's checks of .bundle-oplib, then d256's grid three times, land (.bundle) and op interleaved.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-oplib
. "$(dirname "$0")/device_env.sh"
library_checks
mkdir -p /tmp/ab && cp .bundle/sm90_check /tmp/ab/sm90_check_land && cp .bundle-oplib/sm90_check /tmp/ab/sm90_check_op
step "grid A/B d256"
for rep in 1 2 3; do for v in land op; do g /tmp/ab/sm90_check_$v --bench-only --grid --grid-d 256; done; done
step done
