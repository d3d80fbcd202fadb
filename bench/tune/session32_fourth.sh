#!/usr/bin/env bash
# Session 32's fourth call (~200 s; carry .bundle .bundle-sr .gl). .bundle: main's kernels with sm90_check's new cases
# (the scheduler's counter across streams and a graph); .bundle-sr: call 2's library (the stream's counter, no memset).
# 1. sm90_check in full on .bundle.
# 2. sustained_probe.py (CUPTI kernel times and gaps, nvidia-smi clocks) of both libraries at d128 non-causal 1k and
#    d64 non-causal 2k, where the stream's counter lost 5-10% in calls 2 and 3: longer kernels or longer gaps?
# Files: main.log checks.log probe.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
ck .bundle/sm90_check --no-bench
grep -E "^==|^exit|passed|FAIL|streams" "$OUT/checks.log"
step probe
for lib in .bundle .bundle-sr; do
  for cell in 128,1024,0:1500 64,2048,0:800; do
    echo "######## $lib ${cell%%:*} n ${cell##*:}" >> "$OUT/probe.log"
    FLASHTILE_LIBRARY=$PWD/$lib/libflashtile.so timeout 90 python3 bench/tune/sustained_probe.py --cell "${cell%%:*}" \
      --n "${cell##*:}" >> "$OUT/probe.log" 2>&1
    echo "probe $lib $cell exit $?"
  done
done
grep -E "####|back-to-back" "$OUT/probe.log"
step done
