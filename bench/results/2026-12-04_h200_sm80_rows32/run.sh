#!/usr/bin/env bash
# The merged table (sm80_traits.hpp's kSm80FwdShapes) on the H200: checks of the library, the sm80 forward against
# FA2 over the whole grid with main's library interleaved (peers.log), and ncu of the d128 non-causal kernel beside
# FA2's (ncu.log, opcodes.txt). Bundle .bundle_s: the library and checks, main's library in M/.
set -u
export FT_BUNDLE=.bundle_s
. bench/tools/device_lib.sh
B=$FT_BUNDLE
kEnd=${kEnd:-560}
left() { echo $(( kEnd - ($(date +%s) - t0) )); }
ck() { local t=$1; shift; { echo "== $*"; timeout "$t" "$@"; echo "exit $?"; } >> $OUT/checks.log 2>&1; }
step "checks"
ck 60 $B/cuda_sm80_check --no-time
ck 40 $B/cuda_sm80_serving_check
ck 90 compute-sanitizer --error-exitcode 3 --tool memcheck $B/cuda_sm80_check --small
grep -E "^==|passed|FAIL|ERROR SUMMARY|exit" $OUT/checks.log
step "peers: the library and main's, interleaved (peers.log)"
for r in 1 2; do for v in F M; do
  l=$(left); [ $l -gt 70 ] && l=70; [ $l -lt 20 ] && break
  lib=$PWD/$B/libflashtile.so.0.5.0; [ $v != F ] && lib=$PWD/$B/$v/libflashtile.so.0.5.0
  echo "######## $v round $r" >> $OUT/peers.log
  FLASHTILE_LIBRARY=$lib timeout $l python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
    --dim 64,128,256 --seq 512,1024,2048,4096,8192,16384 --rep 60 --out /tmp/p_$v$r >> $OUT/peers.log 2>&1; echo "$v $r exit $?"
done; done
step "conformance on cuda_sm80"
l=$(left); [ $l -gt 120 ] && l=120
[ $l -gt 30 ] && { timeout $l $B/flashtile_tests --ft-backend=cuda --ft-path=cuda_sm80 -tc='conformance*' > $OUT/conformance.log 2>&1; echo "conformance exit $?"; }
grep -E "test cases|assertions:" $OUT/conformance.log | tail -2
step "ncu: d128 non-causal beside FA2 (ncu.log, opcodes.txt)"
P=bench/tools/fwd_call.py
s="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
s="$s --section InstructionStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis"
n="ncu --clock-control none --launch-skip 2 --launch-count 1 --kernel-name regex:fwd_kernel"
export FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so.0.5.0
for name in ft fa2; do
  l=$(left); [ $l -lt 40 ] && break
  echo "######## $name" >> $OUT/ncu.log
  timeout 70 $n $s python3 $P $name 128 >> $OUT/ncu.log 2>&1; echo "$name sections exit $?"
  timeout 60 $n --section SourceCounters --import-source no -f -o /tmp/$name python3 $P $name 128 > /dev/null 2>&1
  echo "$name source exit $?"
  ncu --import /tmp/$name.ncu-rep --page source --csv --print-source sass > /tmp/$name.csv 2>/dev/null && gzip -c /tmp/$name.csv > /tmp/$name.csv.gz
done
python3 bench/tools/ncu_opcodes.py /tmp/ft.csv.gz /tmp/fa2.csv.gz 40 > $OUT/opcodes.txt 2>&1
head -30 $OUT/opcodes.txt
grep -E "########|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc A|Warp Cycles Per Issued|Block Limit|Local" $OUT/ncu.log
step done
