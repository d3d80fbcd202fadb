#!/usr/bin/env bash
# Session 16, call 7 (carry .bundle .bundle-v4 .gl): smaller persistent head groups at d128 causal. Call 5 had groups
# of 4 > 8 > 16 at 512 and 1k; this adds 2 and 1, and 2k (groups of 8 lost 21% there in call 4). land (.bundle, as
# committed: 512/1k persistent in groups of 4, 2k one CTA per tile) against pers (.bundle-v4, FT_SM90_PERSISTENT=1)
# with --head-group 1, 2, 4, three times interleaved. Files: main.log pers.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "d128 causal persistent head groups 1-4"
FT_BIN_land=.bundle/sm90_check FT_BIN_pers=.bundle-v4/sm90_check_pers
cell_runs 3 "128,512,1 128,1024,1 128,2048,1" "land" "pers --head-group 1" "pers --head-group 2" "pers --head-group 4"
grep -c "^bench" "$OUT/pers.log"
step done
