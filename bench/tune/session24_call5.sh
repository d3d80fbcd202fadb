#!/usr/bin/env bash
# Session 24's call 5 (~200 s; carry .bundle .bundle-s24 .gl: main's build with the small kernel, and variants from
# tests/cuda/build_variants.sh .bundle-s24 'st4=-DFT_SM90_SMALL="64:2:4:64:4:1024"'
# 'st8=-DFT_SM90_SMALL="64:2:4:64:8:1024"'). The small kernel's ring depth (4 or 8 stages against 6) at d64 to 1k,
# three runs interleaved; then ncu of the small kernel at d64 non-causal 512 and causal 1k (sections and
# per-instruction source counters: bench/tune/ncu_source_top.py), for session 25.
# Files: main.log checks.log grid.log ncu.log nc512.csv.gz c1k.csv.gz
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s24 st4 st8
vary .bundle-s24 3 --grid-d 64 --grid-smax 1024
step "ncu"
ncu_prof nc512 64,512,0
ncu_prof c1k 64,1024,1
grep -E "^######## |Duration|SM Frequency|Issue Slots Busy|No Eligible|Eligible Warps" "$OUT/ncu.log" | head -20
step done
