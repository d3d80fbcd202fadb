#!/usr/bin/env bash
# Session 23 call 8 (~120 s; carry .bundle .bundle-s23 .gl; .bundle-s23/mufu_ex2_rate from
# bench/tune/mufu_ex2_rate.cu). For session 24's d64 work: (1) does the MUFU give two exponentials a slot for
# ex2.approx.f16x2 / bf16x2, against ex2.approx.ftz.f32? (2) ncu of the landed kernels (mode 3) at d64 non-causal 4k:
# sections and per-instruction source counters, to set against session 22 call 7's land_d64 (mode 2).
# Files: main.log probe.log ncu.log land3_d64.csv.gz
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "mufu probe"
timeout 60 .bundle-s23/mufu_ex2_rate > "$OUT/probe.log" 2>&1; echo "probe exit $?"; cat "$OUT/probe.log"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
S="$S --section InstructionStats"
N="ncu --clock-control none --launch-skip 4 --launch-count 1"
step "ncu"
echo "######## land3_d64" >> "$OUT/ncu.log"
timeout 60 $N $S --kernel-name regex:sm90_fwd "$FT_BUNDLE"/sm90_check --bench-only --cell 64,4096,0 >> "$OUT/ncu.log" 2>&1
echo "sections exit $?"
timeout 60 $N --section SourceCounters --import-source no -f -o /tmp/land3 --kernel-name regex:sm90_fwd \
  "$FT_BUNDLE"/sm90_check --bench-only --cell 64,4096,0 > /dev/null 2>&1
echo "source exit $?"
ncu --import /tmp/land3.ncu-rep --page source --csv --print-source sass > /tmp/land3.csv 2>/dev/null &&
  gzip -c /tmp/land3.csv > "$OUT/land3_d64.csv.gz"
grep -E "Duration|SM Frequency|Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Instructions  " "$OUT/ncu.log" | head -20
step done
