#!/usr/bin/env bash
# A session-12 experiment (~330 s; main's .bundle has it, nothing else to build): sm90 causal launches of one CTA per
# tile with tiles m-block outermost (sm90_check --m-major 1, the test hook sm90_m_major_override). The hardware's
# block order then schedules the longest tiles of every head first, which is list scheduling's longest-first. Today
# that order holds only within each head, so the grid ends in a tail of mixed lengths.
# The Vulkan paths' same change (kFlagRowsOuter, session 11 call 4) gave KHR +1..8% and portable +0.5..4.8% at one
# workgroup per SM, like sm90's one CTA per SM. coopmat2 lost 5-17% there, with several workgroups per SM.
# The target cells are the causal ones at 2k-8k, the cuDNN bar's misses: d64 0.82-0.98x, d128 0.93-0.98x,
# d256 0.91-0.94x (session 11 call 2).
# run(carry=[".bundle", ".gl"], timeout_s=560, command='bash bench/tune/session12_sm90_mmajor.sh')
# 1. sm90_check with it on one CTA per tile, and racecheck on --tiny.
# 2. The whole grid twice, interleaved (bench/tune/ab_grid.py grid.log base); then peers.
# Persistent causal launches (d64 to 1k) are m-major already, which makes them a control.
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
W=/tmp/mm; mkdir -p $W
printf '#!/bin/sh\nexec %s/%s/sm90_check "$@"\n' "$PWD" "$FT_BUNDLE" > $W/sm90_check_base
printf '#!/bin/sh\nexec %s/%s/sm90_check --m-major 1 "$@"\n' "$PWD" "$FT_BUNDLE" > $W/sm90_check_mmajor
chmod +x $W/sm90_check_base $W/sm90_check_mmajor
step "checks"
ck $W/sm90_check_mmajor --no-bench --ctas -1
ck $W/sm90_check_mmajor --no-bench --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
ab $W base mmajor
FT_PEERS_TIMEOUT=120 peers_grid
step "sanitizers"
san 90 racecheck $W/sm90_check_mmajor --tiny --no-bench --ctas -1
grep -E "^==|^exit|passed|FAIL|ERROR|hazard|SUMMARY" "$OUT/checks.log"
step done
