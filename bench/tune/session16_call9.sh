#!/usr/bin/env bash
# Session 16, call 9 (carry .bundle .gl): the library with d256 causal persistent to 512 keys in head groups of 4
# (call 8: +3.9%). Checks (tile_tests, sm90_check with the new d256 case past the SM count, racecheck and memcheck
# --tiny, conformance on both CUDA paths), then d256 causal 512 dispatched (persistent) against one CTA per tile
# (--ctas -1: the launch before), three times interleaved. Files: main.log checks.log conformance.log pers.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
step "d256 causal 512"
FT_BIN_land=.bundle/sm90_check
cell_runs 3 "256,512,1" "land" "land --ctas -1"
grep "^==\|^bench" "$OUT/pers.log"
step done
