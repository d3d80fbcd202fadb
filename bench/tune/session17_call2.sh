#!/usr/bin/env bash
# Session 17, call 2 (~250 s; carry .bundle .bundle-v1 .gl): narrow first blocks (FT_SM90_NARROW=1,
# Sm90Config::narrow_first). A tile's first block in visit order is the ragged end (non-causal: d256's 512 = 6 x 80
# + 32) or the causal diagonal, where a consumer's 64 rows may need only its first keys (d128 causal: consumer 0
# needs 64 of 128). Its Q·Kᵀ then runs as a narrower wgmma into an S tile of that width, with the softmax on it.
# Checks of the variant (sm90_check, racecheck and memcheck --tiny), then the whole grid twice interleaved against
# the bundle's (main), the peers; then ncu (SpeedOfLight, WarpStateStats) of two
# missed cells, main's kernel and cuDNN's: d256 non-causal 512 and d128 causal 2k.
# run(carry=[".bundle", ".bundle-v1", ".gl"], timeout_s=480, command='bash bench/tune/session17_call2.sh')
# Analyse: bench/tune/ab_grid.py grid.log main. Files: main.log checks.log grid.log ncu.txt
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
ck .bundle-v1/sm90_check_narrow --no-bench
san 150 racecheck .bundle-v1/sm90_check_narrow --tiny --no-bench
san 150 memcheck .bundle-v1/sm90_check_narrow --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard|ERROR SUMMARY" "$OUT/checks.log"
mkdir -p /tmp/s17 && cp "$FT_BUNDLE"/sm90_check /tmp/s17/sm90_check_main && cp .bundle-v1/sm90_check_narrow /tmp/s17/
ab /tmp/s17 main narrow
FT_PEERS_TIMEOUT=100 peers_grid
step "ncu"
N="ncu --clock-control none --launch-skip 4 --launch-count 1 --section SpeedOfLight --section WarpStateStats"
N="$N --section MemoryWorkloadAnalysis --section LaunchStats -f"
for cell in 256,512,0 128,2048,1; do
  echo "==== sm90 $cell" >> "$OUT/ncu.txt"
  timeout 60 $N --kernel-name regex:sm90_fwd "$FT_BUNDLE"/sm90_check --bench-only --cell $cell >> "$OUT/ncu.txt" 2>&1
  echo "sm90 $cell exit $?"
  echo "==== cudnn $cell" >> "$OUT/ncu.txt"
  timeout 80 $N --kernel-name regex:'cudnn|sdpa|fmha|flash' python3 tests/cuda/sm90_peer.py --cudnn-only --cell $cell \
    >> "$OUT/ncu.txt" 2>&1
  echo "cudnn $cell exit $?"
done
step done
