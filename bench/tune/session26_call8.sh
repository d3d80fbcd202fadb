#!/usr/bin/env bash
# Session 26's eighth call (~200 s; carry .bundle .gl). .bundle: main at c1e374d.
# ncu of three short cells (sections into ncu.log; per-instruction stall samples into NAME.csv.gz, read by
# bench/tune/ncu_source_top.py): where the per-tile epilogue's time goes (call 1's trace: about 1 us a tile at
# d128 non-causal 512 and d64 non-causal 512, 1.45 us at d256 causal 512).
# Files: main.log ncu.log nc128.csv.gz nc64.csv.gz c256.csv.gz
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "ncu"
ncu_prof nc128 128,512,0
ncu_prof nc64 64,512,0
ncu_prof c256 256,512,1
step done
