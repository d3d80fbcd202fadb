#!/usr/bin/env bash
# Session 25's call 6 (~200 s; carry .bundle .gl; .bundle: main at f1236ba, call 5's). Nothing built: the head-group
# sizes of causal launches under the scheduler through sm90_check's --head-group N (sm90_head_group_override; 0: the
# configured 32 MB rule, sm90_launch_group): d64 causal (persistent at every length since this session; 1k-16k: 1k all
# pairs, 2k 64, 4k 32, 8k 16, 16k 8 pairs) three times, d256 causal (under the scheduler from 513 keys since this
# session, its groups never tuned: 1k 32, 2k 16, 4k 8 pairs) twice. Causal cells only change with N.
# Files: main.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check
step "head groups"
for rep in 1 2 3; do
  for hg in 0 4 8 16 32 64; do g "$FT_BUNDLE"/sm90_check --bench-only --grid --grid-d 64 --head-group $hg; done
  [ "$rep" = 3 ] && continue
  for hg in 0 8 16 64; do g "$FT_BUNDLE"/sm90_check --bench-only --grid --grid-d 256 --head-group $hg; done
done
step done
