#!/usr/bin/env bash
# Session 23 call 10 (~90 s; carry .bundle .gl: main's build as in call 9). The profile of two cells that miss FA2's
# 1.8x with the landed kernels: d128 causal 1k and d256 causal 512 (ncu sections and per-instruction source
# counters, one launch after four, clocks not locked; bench/tune/ncu_source_top.py).
# Files: main.log ncu.log d128c1k.csv.gz d256c512.csv.gz
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
S="$S --section InstructionStats --section LaunchStats --section Occupancy"
N="ncu --clock-control none --launch-skip 4 --launch-count 1"
prof() {  # prof NAME CELL
  echo "######## $1 ($2)" >> "$OUT/ncu.log"
  timeout 60 $N $S --kernel-name regex:sm90_fwd "$FT_BUNDLE"/sm90_check --bench-only --cell "$2" >> "$OUT/ncu.log" 2>&1
  echo "$1 sections exit $?"
  timeout 60 $N --section SourceCounters --import-source no -f -o "/tmp/$1" --kernel-name regex:sm90_fwd \
    "$FT_BUNDLE"/sm90_check --bench-only --cell "$2" > /dev/null 2>&1
  echo "$1 source exit $?"
  ncu --import "/tmp/$1.ncu-rep" --page source --csv --print-source sass > "/tmp/$1.csv" 2>/dev/null &&
    gzip -c "/tmp/$1.csv" > "$OUT/$1.csv.gz"
}
step "ncu"
prof d128c1k 128,1024,1
prof d256c512 256,512,1
grep -E "^######## |Duration|SM Frequency|Executed Ipc A|Issue Slots Busy|No Eligible|Achieved Occupancy|Waves Per SM|Grid Size" "$OUT/ncu.log" | head -30
step done
