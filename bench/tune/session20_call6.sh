#!/usr/bin/env bash
# Session 20 call 6 (~300 s; carry .bundle .bundle-s20c .gl). Build: tests/cuda/build_variants.sh .bundle-s20c 'cur='
# 'lazy=-DFT_SM90_LAZY=1' 'n160=-DFT_SM90_CFG128="2:160:2:2"', then with bench/tune/session20_nap.patch applied
# 'nap=-DFT_SM90_STORER_NAP=500' (rejected: level; not in the tree).
# 1. d128 non-causal 8k/16k with clusters (641-643 TFLOP/s at 16k in call 5, bar 650): lazy rescaling (rejected at
#    d128 in session 14, before clusters) and 160-key blocks, against cur (the library's kernels).
# 2. nap: staged O's storer thread sleeps 500 ns between polls. Call 2's ncu of d64 non-causal 4k had its poll loop
#    (o_full[0]) executed 17.2M times, on a scheduler that one warp of each consumer shares; d64 is issue-bound.
#    Cells: d64 non-causal 1k/4k/16k (staged O at every length) and d128 non-causal 2k (its short kernel).
# sm90_check (nap: the full list; the others --quick) and racecheck --tiny of each variant; the cells four times
# interleaved (pers.log); cuDNN and FA2 at d128 non-causal 16k and d64 non-causal 4k (peers.log).
# Files: main.log checks.log pers.log peers.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "checks"
ck .bundle-s20c/sm90_check_nap --no-bench
for v in cur lazy n160; do ck .bundle-s20c/sm90_check_$v --quick --no-bench; done
for v in nap lazy n160; do san 100 racecheck .bundle-s20c/sm90_check_$v --tiny --no-bench; done
grep -E "^==|^exit|passed|hazard" "$OUT/checks.log"
step "cells"
for v in cur lazy n160 nap; do declare "FT_BIN_$v=.bundle-s20c/sm90_check_$v"; done
cell_runs 4 "128,8192,0 128,16384,0" cur lazy n160
cell_runs 4 "64,1024,0 64,4096,0 64,16384,0 128,2048,0" cur nap
grep -c "^bench" "$OUT/pers.log"
step "peers"
for c in 128,16384,0 64,4096,0; do timeout 60 python3 tests/cuda/sm90_peer.py --cell $c >> "$OUT/peers.log" 2>&1; done
grep peer "$OUT/peers.log"
step done
