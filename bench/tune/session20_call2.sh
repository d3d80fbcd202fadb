#!/usr/bin/env bash
# Session 20 call 2 (~200 s; carry .bundle and .gl; nothing to build): the profiles issue 4 asks for where a cell
# misses. ncu (clocks not locked, one launch after four) at d128 non-causal 16k (bar 650 TFLOP/s) on ours and cuDNN,
# and at d64 non-causal 4k (FA2's 1.8x) on ours, cuDNN and FA2: speed of light, compute and memory workload, warp
# states, scheduler; per-SASS-instruction source counters (stall samples) for ours and cuDNN
# (bench/tune/ncu_source_top.py); the tensor-pipe metric names this ncu knows (for the next call's --metrics).
# run(carry=[".bundle", ".gl"], timeout_s=420, command='bash bench/tune/session20_call2.sh')
# Also tile_tests (its warp_uniform case is new). Files: checks.log main.log ncu.log sm90_d128.csv.gz cudnn_d128.csv.gz sm90_d64.csv.gz cudnn_d64.csv.gz metrics.txt.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats"
S="$S --section SchedulerStats --section LaunchStats --section Occupancy"
N="ncu --clock-control none --launch-skip 4 --launch-count 1"
PEER="regex:cudnn|sdpa|fmha|flash"
step "tile_tests"
ck "$FT_BUNDLE"/tile_tests; grep -E "test cases|exit" "$OUT/checks.log"
step "metric names"
ncu --query-metrics --chip gh100 2>&1 | grep -iE "gmma|tensor_op|pipe_tensor|ops_path_tensor" > "$OUT/metrics.txt"
wc -l < "$OUT/metrics.txt"
page() {  # page REPORT NAME: the source page as gzipped CSV
  ncu --import "$1" --page source --csv --print-source sass > "/tmp/$2.csv" 2> "/tmp/$2.err" &&
    gzip -c "/tmp/$2.csv" > "$OUT/$2.csv.gz"
  echo "$2: $(wc -l < "/tmp/$2.csv") source rows $(head -c 200 "/tmp/$2.err")"
}
prof() {  # prof NAME D,S,C KERNEL-REGEX COMMAND...: sections into ncu.log, source counters into NAME.csv.gz
  local name=$1 cell=$2 k=$3; shift 3
  echo "######## $name $cell" >> "$OUT/ncu.log"
  timeout 120 $N $S --kernel-name "$k" "$@" --cell "$cell" >> "$OUT/ncu.log" 2>&1
  echo "$name sections exit $?"
  [ "$name" = fa2_d64 ] && return
  timeout 120 $N --section SourceCounters --import-source no -f -o "/tmp/$name" --kernel-name "$k" "$@" \
    --cell "$cell" > /dev/null 2>&1
  echo "$name source exit $?"
  page "/tmp/$name.ncu-rep" "$name"
}
step "ncu"
prof sm90_d128 128,16384,0 regex:sm90_fwd "$FT_BUNDLE"/sm90_check --bench-only
prof cudnn_d128 128,16384,0 "$PEER" python3 tests/cuda/sm90_peer.py --cudnn-only
prof sm90_d64 64,4096,0 regex:sm90_fwd "$FT_BUNDLE"/sm90_check --bench-only
prof cudnn_d64 64,4096,0 "$PEER" python3 tests/cuda/sm90_peer.py --cudnn-only
prof fa2_d64 64,4096,0 "$PEER" python3 tests/cuda/sm90_peer.py --flash-only
grep -E "^######## |Duration|SM Frequency|Registers Per|Grid Size|Compute \(SM\) Th|DRAM Through|L2 Cache Th|Executed Ipc A|Issue Slots Busy|No Eligible|Achieved Occ" "$OUT/ncu.log" | head -80
ls -la "$OUT"
step done
