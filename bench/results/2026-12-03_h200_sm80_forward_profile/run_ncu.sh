#!/usr/bin/env bash
# ncu of the sm80 forward (main's, cuda/sm80-fast's) beside FA2's kernel: d128 bf16 non-causal, B 4 x 4096, H 16.
set -u
B=.bundle_80
python3 - "$B" <<'PY'
import lzma, os, pathlib, shutil, sys
for x in pathlib.Path(sys.argv[1]).rglob("*.xz"):
    with lzma.open(x) as f, open(x.with_suffix(""), "wb") as g:
        shutil.copyfileobj(f, g)
    os.chmod(x.with_suffix(""), 0o755)
    x.unlink()
PY
FT_BUNDLE=$B . bench/tools/device_lib.sh
s="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
s="$s --section InstructionStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis"
n="ncu --clock-control none --launch-skip 2 --launch-count 1 --kernel-name regex:fwd_kernel"
for w in new:$PWD/$B/libflashtile.so.0 fa2:$PWD/$B/libflashtile.so.0 main:$PWD/$B/main/libflashtile.so.0; do
  name=${w%%:*}; lib=${w#*:}; arg=ft; [ $name = fa2 ] && arg=fa2
  step "$name"
  echo "######## $name" >> $OUT/ncu.log
  FLASHTILE_LIBRARY=$lib timeout 70 $n $s python3 bench/tools/fwd_call.py $arg 128 >> $OUT/ncu.log 2>&1; echo "$name sections exit $?"
  FLASHTILE_LIBRARY=$lib timeout 60 $n --section SourceCounters --import-source no -f -o /tmp/$name python3 bench/tools/fwd_call.py $arg 128 > /dev/null 2>&1
  echo "$name source exit $?"
  ncu --import /tmp/$name.ncu-rep --page source --csv --print-source sass > /tmp/$name.csv 2>/dev/null && gzip -c /tmp/$name.csv > $OUT/$name.csv.gz
done
python3 bench/tools/ncu_opcodes.py $OUT/new.csv.gz $OUT/fa2.csv.gz 40 > $OUT/opcodes.txt 2>&1
python3 bench/tools/ncu_opcodes.py $OUT/main.csv.gz $OUT/fa2.csv.gz 40 >> $OUT/opcodes.txt 2>&1
head -60 $OUT/opcodes.txt
grep -E "########|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc A|Warp Cycles Per Issued|Compute \(SM\) Throughput|L1/TEX Cache Throughput|Shared Memory" $OUT/ncu.log
step done
