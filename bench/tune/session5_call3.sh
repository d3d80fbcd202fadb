#!/usr/bin/env bash
# Session 5, device call 3 (carry: .bundle .gl build-old). Is d128 16k non-causal held back by the kernel or by the
# clock? Run 2 of the first session measured 712.6 TFLOP/s (cuDNN 675.8) with 3 warm-up launches then 10 timed ones;
# the grid since (100 ms warm-up, batches of 10 back to back) gives ~605-620 (cuDNN ~605-620).
# build-old/sm90_check_6ec0cab: that run's kernel (commit 6ec0cab) with today's timing spliced into its harness.
# Both kernels interleaved, B=1 H=16 S=16384 d128, then cuDNN, with the SM clock sampled; then ncu SpeedOfLight
# (clocks not locked) on ours and cuDNN's. Files: main.log grid.log clocks.log ncu.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
clocks_start
step "old vs new kernel"
for rep in 1 2; do
  mark "old $rep"; g build-old/sm90_check_6ec0cab --bench-only
  mark "new $rep"; g .bundle/sm90_check --bench-only --cell 128,16384,0; g .bundle/sm90_check --bench-only --cell 128,16384,1
  mark "cudnn $rep"; timeout 60 python3 tests/cuda/sm90_peer.py --cudnn-only --cell 128,16384,0 >> "$OUT/grid.log" 2>&1
  mark "end $rep"
done
grep -E "d=128|peer" "$OUT/grid.log"
kill "$clk" 2>/dev/null
step "ncu"
N="ncu --clock-control none --launch-skip 20 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats"
echo "######## sm90 new" >> "$OUT/ncu.log"
timeout 90 $N --kernel-name regex:sm90_fwd .bundle/sm90_check --bench-only --cell 128,16384,0 >> "$OUT/ncu.log" 2>&1
echo "######## sm90 old" >> "$OUT/ncu.log"
timeout 90 $N --kernel-name regex:sm90_fwd build-old/sm90_check_6ec0cab --bench-only >> "$OUT/ncu.log" 2>&1
echo "######## cudnn" >> "$OUT/ncu.log"
timeout 90 $N --kernel-name regex:'cudnn|sdpa|fmha|flash' python3 tests/cuda/sm90_peer.py --cudnn-only --cell 128,16384,0 >> "$OUT/ncu.log" 2>&1
grep -E "########|SM Frequency|Duration|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc A|Issue Slots Busy" "$OUT/ncu.log"
step done
