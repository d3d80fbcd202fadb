#!/usr/bin/env bash
# Session 23 call 10 (~90 s; carry .bundle .gl: main's build as in call 9). The profile of two cells that miss FA2's
# 1.8x with the landed kernels: d128 causal 1k and d256 causal 512 (ncu sections and per-instruction source
# counters, one launch after four, clocks not locked; bench/tune/ncu_source_top.py).
# Files: main.log ncu.log d128c1k.csv.gz d256c512.csv.gz
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "ncu"
ncu_prof d128c1k 128,1024,1
ncu_prof d256c512 256,512,1
grep -E "^######## |Duration|SM Frequency|Executed Ipc A|Issue Slots Busy|No Eligible|Achieved Occupancy|Waves Per SM|Grid Size" "$OUT/ncu.log" | head -30
step done
