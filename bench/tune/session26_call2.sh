#!/usr/bin/env bash
# Session 26's second call (~300 s; carry .bundle .bundle-pp .gl). Build: cmake --build build -j2 && bash
# bench/make_bundle.sh build .bundle (main with d128 causal's short kernel persistent to 8k); .bundle-pp/sm90_check_pp:
# tests/cuda/build_variants.sh .bundle-pp 'pp=-DFT_SM90_SMALL_PP=1' from branch wip/s26-pairs (d64 non-causal's small
# kernel in pingpong, its four consumers in two pairs taking turns: the trace of call 1 had them in lockstep).
# The library's checks of .bundle; pp's checks; d64's grid three times, land and pp interleaved.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
library_checks
smoke_some .bundle-pp pp
vary .bundle-pp 3 --grid-d 64
step done
