#!/usr/bin/env bash
# Session 22's seventh call (~150 s; carry .bundle-s22d: main's sm90_check as landed, f9822ae, as sm90_check_land,
# and call 2's sm90_check_abl2, the kernels without row maxima, wrong results). Where the rest of the max's price
# goes: ncu sections and per-instruction stall samples of land and abl2 at d64 non-causal 4k (mode 2 recovered 5 of
# abl2's 17% there). Files: main.log ncu.log land_d64.csv.gz abl2_d64.csv.gz (bench/tune/ncu_source_top.py).
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
S="$S --section InstructionStats"
N="ncu --clock-control none --launch-skip 4 --launch-count 1"
prof() {  # prof NAME BINARY: sections into ncu.log, source counters into NAME.csv.gz
  local name=$1 bin=$2
  echo "######## $name" >> "$OUT/ncu.log"
  timeout 60 $N $S --kernel-name regex:sm90_fwd "$bin" --bench-only --cell 64,4096,0 >> "$OUT/ncu.log" 2>&1
  echo "$name sections exit $?"
  timeout 60 $N --section SourceCounters --import-source no -f -o "/tmp/$name" --kernel-name regex:sm90_fwd "$bin" \
    --bench-only --cell 64,4096,0 > /dev/null 2>&1
  echo "$name source exit $?"
  ncu --import "/tmp/$name.ncu-rep" --page source --csv --print-source sass > "/tmp/$name.csv" 2>/dev/null &&
    gzip -c "/tmp/$name.csv" > "$OUT/$name.csv.gz"
}
step "ncu"
prof land_d64 .bundle-s22d/sm90_check_land
prof abl2_d64 .bundle-s22d/sm90_check_abl2
grep -E "^######## |Duration|SM Frequency|Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Instructions  " "$OUT/ncu.log" | head -40
step done
