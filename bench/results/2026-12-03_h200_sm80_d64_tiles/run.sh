#!/usr/bin/env bash
# The sm80 forward at d64 with 128-key K/V tiles (issue 45) against 64-key ones, on the H200: checks of the new
# library (checks.log, conformance.log), the sm80 forward against FA2 with both libraries interleaved (peers.log), then
# ncu of the new d64 kernel beside FA2's (ncu.log, opcodes.txt). Bundle .bundle_w: the new library and checks, the
# previous library in A/ (../2026-12-03_h200_sm80_copies' build).
set -u
B=.bundle_w
FT_BUNDLE=$B . bench/tools/device_lib.sh
NEW=$PWD/$B/libflashtile.so.0.5.0 OLD=$PWD/$B/A/libflashtile.so.0.5.0
kEnd=${kEnd:-380}
left() { echo $(( kEnd - ($(date +%s) - t0) )); }
ck() { local t=$1; shift; { echo "== $*"; timeout "$t" "$@"; echo "exit $?"; } >> $OUT/checks.log 2>&1; }
step "checks (checks.log, conformance.log)"
ck 40 $B/cuda_sm80_check --no-time
timeout 200 $B/flashtile_tests --ft-backend=cuda -tc='conformance*' > $OUT/conformance.log 2>&1; echo "conformance exit $?"
grep -E "^==|passed|FAIL|exit" $OUT/checks.log; grep -E "test cases|assertions:" $OUT/conformance.log | tail -2
step "sm80 forward against FA2, the two libraries interleaved (peers.log)"
for r in 1 2; do for v in NEW OLD; do
  l=$(left); [ $l -gt 45 ] && l=45; [ $l -lt 20 ] && break
  echo "######## $v round $r" >> $OUT/peers.log
  FLASHTILE_LIBRARY=${!v} timeout $l python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
    --dim 64,128 --seq 1024,4096,16384 --rep 60 --out /tmp/p_$v$r >> $OUT/peers.log 2>&1; echo "$v $r exit $?"
done; done
grep -E "^######## |geomean" $OUT/peers.log
step "ncu: the new d64 kernel beside FA2's (ncu.log, opcodes.txt)"
P=bench/tools/fwd_call.py
s="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
s="$s --section InstructionStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis"
n="ncu --clock-control none --launch-skip 2 --launch-count 1 --kernel-name regex:fwd_kernel"
for name in new fa2; do
  l=$(left); [ $l -lt 40 ] && break
  arg=ft; [ $name = fa2 ] && arg=fa2
  echo "######## $name" >> $OUT/ncu.log
  FLASHTILE_LIBRARY=$NEW timeout 70 $n $s python3 $P $arg 64 >> $OUT/ncu.log 2>&1; echo "$name sections exit $?"
  FLASHTILE_LIBRARY=$NEW timeout 60 $n --section SourceCounters --import-source no -f -o /tmp/$name python3 $P $arg 64 > /dev/null 2>&1
  echo "$name source exit $?"
  ncu --import /tmp/$name.ncu-rep --page source --csv --print-source sass > /tmp/$name.csv 2>/dev/null && gzip -c /tmp/$name.csv > /tmp/$name.csv.gz
done
python3 bench/tools/ncu_opcodes.py /tmp/new.csv.gz /tmp/fa2.csv.gz 40 > $OUT/opcodes.txt 2>&1
head -50 $OUT/opcodes.txt
grep -E "########|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc A|Warp Cycles Per Issued|Block Limit" $OUT/ncu.log
step done
