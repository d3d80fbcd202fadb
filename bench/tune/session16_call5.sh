#!/usr/bin/env bash
# Session 16, call 5 (carry .bundle .bundle-v4 .gl): persistent d128 causal launches in head groups, confirming call 4
# (pers --head-group 8 at 1k: 385.6 against land's 375.8 TFLOP/s, +2.6%; every other causal cell lost).
# land (.bundle's sm90_check, dispatched: 512 persistent m-major with Q prefetch, 1k one CTA per tile in groups of 8)
# against pers (.bundle-v4: every launch persistent, d128 causal on its Q-prefetch kernel) with --head-group 4, 8, 16,
# d128 causal 512 and 1k, three times interleaved. Files: main.log pers.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "d128 causal persistent head groups"
FT_BIN_land=.bundle/sm90_check FT_BIN_pers=.bundle-v4/sm90_check_pers
cell_runs 3 "128,512,1 128,1024,1" "land" "pers --head-group 4" "pers --head-group 8" "pers --head-group 16"
grep -c "^bench" "$OUT/pers.log"
step done
