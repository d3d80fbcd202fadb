#!/usr/bin/env bash
# Session 29 call 4 (~120 s; carry .bundle-s29 .gl): d64 causal's small kernel (main's: .bundle-s29/sm90_check_land)
# under head groups of 32 / 64 / 128 / 256 (batch, head) pairs (sm90_check --head-group, the launch's tile order)
# against its default (one group of all pairs: 4 and 8 m-blocks a head at 1k/2k are under the 8 that dynamic groups
# need). Call 3's ncu had the default reading 2.61 TB/s from DRAM at causal 1k, the grouped kernel (8 m-blocks a head,
# 32 MB groups) 1.65. Three runs interleaved; TFLOP/s per cell and run in pers.log.
# Files: main.log pers.log
set -u
FT_LOG=main.log FT_BUNDLE=.bundle-s29
. "$(dirname "$0")/device_env.sh"
FT_BIN_main=.bundle-s29/sm90_check_land
cell_runs 3 "64,512,1 64,1024,1 64,2048,1" "main" "main --head-group 32" "main --head-group 64" \
  "main --head-group 128" "main --head-group 256"
step done
