#!/usr/bin/env bash
# Session 16, call 8 (carry .bundle .bundle-v4 .gl): d256 causal 512 (its short kernel: 64-key blocks, one CTA per
# tile) launched persistent (pers, FT_SM90_PERSISTENT=1), m-major or in head groups of 4 or 8, against land, three
# times interleaved. d256 has no room for Q prefetch. Then d256 non-causal 8k and 16k, land's persistent launch
# against one CTA per tile (--ctas -1), three times interleaved (one CTA per tile won 8k in calls 1, 4, 6).
# Files: main.log pers.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "d256 causal 512 persistent"
FT_BIN_land=.bundle/sm90_check FT_BIN_pers=.bundle-v4/sm90_check_pers
cell_runs 3 "256,512,1" "land" "pers" "pers --head-group 4" "pers --head-group 8"
step "d256 non-causal 8k/16k launches"
cell_runs 3 "256,8192,0 256,16384,0" "land" "land --ctas -1"
grep -c "^bench" "$OUT/pers.log"
step done
