#!/usr/bin/env bash
# A session-13 experiment (~300 s; carry .bundle-hg and .gl: nothing to build on the device). sm90 causal launches
# of one CTA per tile with tiles in groups of N (batch, head) pairs, m-block outermost within a group
# (sm90_check --head-group N, the test hook sm90_head_group_override of branch wip/sm90-head-groups).
# Why: session 12 call 1's m-major order (one group of all heads: longest-first across heads) lost 7% causal, since
# every head's K/V came into flight at once; the shipped order (m-block innermost) keeps a head's tiles together for
# L2 but ends the grid on mixed lengths. Groups of a wave or two keep about as many heads in flight as today and put
# each group's longest tiles first. Target: the causal cuDNN misses at 2k-8k (d64 0.82-0.98x, d128 0.93-0.98x, d256
# 0.91-0.94x).
# .bundle-hg holds two standalone builds (cmake -S tests/cuda -B DIR -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a
# -DCMAKE_BUILD_TYPE=Release; cmake --build DIR --target sm90_check), same flags both: sm90_check_base from main
# (95b23d5, the kernels of sessions 8-12) and sm90_check_hg from the branch.
# run(carry=[".bundle-hg", ".gl"], timeout_s=560, command='bash bench/tune/session13_sm90_head_groups.sh')
# Analyse: bench/tune/ab_grid.py grid.log base (hg0 is the branch in the shipped order: the code's own cost).
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-hg
. "$(dirname "$0")/device_env.sh"
W=/tmp/hg; mkdir -p $W
printf '#!/bin/sh\nexec %s/.bundle-hg/sm90_check_base "$@"\n' "$PWD" > $W/sm90_check_base
for g in 0 2 4 8; do
  a=$g; [ $g = 0 ] && a=-1
  printf '#!/bin/sh\nexec %s/.bundle-hg/sm90_check_hg --head-group %s "$@"\n' "$PWD" $a > $W/sm90_check_hg$g
done
chmod +x $W/*
step "checks"
ck $W/sm90_check_hg4 --no-bench --ctas -1
ck $W/sm90_check_hg2 --no-bench --ctas -1
ck $W/sm90_check_hg0 --no-bench --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
ab $W base hg0 hg2 hg4 hg8
FT_PEERS_TIMEOUT=120 peers_grid
step "sanitizers"
san 90 racecheck $W/sm90_check_hg2 --tiny --no-bench --ctas -1
grep -E "^==|^exit|passed|FAIL|ERROR|hazard|SUMMARY" "$OUT/checks.log"
step done
