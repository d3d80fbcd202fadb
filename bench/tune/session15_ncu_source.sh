#!/usr/bin/env bash
# A session-15 probe, ready (~120 s; carry .bundle and .gl; nothing to build: the library's sm90_check). Which
# instructions of our short causal kernel execute the most, against cuDNN's? Session 14 (calls 7-9) found ours
# executing 24-26% more warp instructions at d64/d128 causal 512, with 8.5x cuDNN's mbarrier-wait (SYNCS) and 7.5x
# its branch instructions, and a suspend-time hint on the waits changed nothing (call 11): are they the producer's
# polling (one warp, sharing a scheduler with consumer warps) or the consumers' waits?
# Collects SourceCounters (per-SASS-instruction executed counts and stall samples) into a report per kernel, then
# prints the source page as CSV (ncu 2023+: --page source --print-source sass); where this ncu lacks those flags,
# the details page with its hot spots instead. The CSVs come back gzipped.
# run(carry=[".bundle", ".gl"], timeout_s=300, command='bash bench/tune/session15_ncu_source.sh')
# Files: main.log, sm90_d64.csv.gz, cudnn_d64.csv.gz, sm90_d128.csv.gz, cudnn_d128.csv.gz (or *_details.txt).
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
N="ncu --clock-control none --launch-skip 4 --launch-count 1 --section SourceCounters --section WarpStateStats"
N="$N --import-source no -f"
page() {  # page REPORT NAME: the source page as gzipped CSV, or the details page
  if ncu --import "$1" --page source --csv --print-source sass > "/tmp/$2.csv" 2> "/tmp/$2.err"; then
    gzip -c "/tmp/$2.csv" > "$OUT/$2.csv.gz"
    echo "$2: $(wc -l < "/tmp/$2.csv") source rows"
  else
    echo "$2: no source page ($(head -c 200 "/tmp/$2.err")); details instead"
    ncu --import "$1" --page details --print-details all > "$OUT/$2_details.txt" 2>&1
  fi
}
step "ncu source counters"
for cell in 64,512,1 128,512,1; do
  d=${cell%%,*}
  timeout 80 $N -o /tmp/sm90_d$d --kernel-name regex:sm90_fwd "$FT_BUNDLE"/sm90_check --bench-only --cell $cell \
    > /dev/null 2>&1
  echo "sm90 $cell exit $?"
  page /tmp/sm90_d$d.ncu-rep sm90_d$d
  timeout 100 $N -o /tmp/cudnn_d$d --kernel-name regex:'cudnn|sdpa|fmha|flash' python3 tests/cuda/sm90_peer.py \
    --cudnn-only --cell $cell > /dev/null 2>&1
  echo "cudnn $cell exit $?"
  page /tmp/cudnn_d$d.ncu-rep cudnn_d$d
done
ls -la "$OUT"
step done
