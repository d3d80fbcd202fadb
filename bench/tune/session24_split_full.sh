#!/usr/bin/env bash
# The S-in-halves A/B in full (~220 s; build: bash bench/tune/session24_split_build.sh; carry .bundle .bundle-split .gl).
# S in column halves (branch wip/s24-split-s; session 24 call 7 took a first look): its --tiny and full sm90_check (the jump and step cases
# drive the retry after a split step), memcheck --tiny, then the whole grid three times interleaved against land.
# Session 24's ncu of the small kernel had each block's first Q·Kᵀ HGMMA and the wait for S leading the stall
# samples; at d64 non-causal 4k (session 23) the MUFU and the tensor cores were each about 60% busy.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-split split
for v in $vs; do san 150 memcheck .bundle-split/sm90_check_$v --tiny --no-bench; done
vary .bundle-split 3
step done
