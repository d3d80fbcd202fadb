#!/usr/bin/env bash
# The sm90 varlen forward and paged decode's box lanes (issue 42), the sm80 copies and scale fold (issue 45) on the
# H200, one call: checks first (checks.log, conformance.log), then varlen prefill against the dense kernel
# (varlen.log), paged decode (paged.log), the sm80 forward against FA2 (peers.log), while time is left (kEnd s). Bundle: .bundle_v (make_bundle.sh, binaries xz'd).
set -u
B=.bundle_v
FT_BUNDLE=$B . bench/tools/device_lib.sh
export FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so.0
kEnd=${kEnd:-540}
left() { echo $(( kEnd - ($(date +%s) - t0) )); }
ck() { local t=$1; shift; { echo "== $*"; timeout "$t" "$@"; echo "exit $?"; } >> $OUT/checks.log 2>&1; }
step "checks (checks.log)"
ck 60 $B/sm90_serving_check
ck 90 compute-sanitizer --error-exitcode 3 --tool memcheck $B/sm90_serving_check --small
ck 40 $B/cuda_sm80_check --no-time
ck 60 $B/cuda_sm80_bwd_check
grep -E "^==|passed|FAIL|exit|ERROR SUMMARY|hostile" $OUT/checks.log
step "conformance on cuda (every path)"
timeout 200 $B/flashtile_tests --ft-backend=cuda -tc='conformance*' > $OUT/conformance.log 2>&1; echo "conformance exit $?"
grep -E "test cases|assertions|Status" $OUT/conformance.log | tail -4
step "varlen prefill against the dense kernel (varlen.log)"
for d in 128 64; do
  l=$(left); [ $l -gt 70 ] && l=70; [ $l -lt 25 ] && break
  timeout $l python3 bench/varlen_prefill.py --dim $d --paths auto,cuda_sm80 --dense-seq 1024,4096 --rep 100 >> $OUT/varlen.log 2>&1
  echo "varlen d$d exit $?"
done
grep -E "varlen|dense" $OUT/varlen.log | head -40
step "paged decode, pages 16/64/256, against contiguous (paged.log)"
l=$(left); [ $l -gt 60 ] && l=60
[ $l -gt 25 ] && { timeout $l python3 bench/decode_paged.py --paths cuda_sm90 >> $OUT/paged.log 2>&1; echo "paged exit $?"; }
grep -vE "^\s*$" $OUT/paged.log | tail -22
step "sm80 forward against FA2 (peers.log)"
l=$(left); [ $l -gt 90 ] && l=90
[ $l -gt 30 ] && { timeout $l python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
  --dim 64,128 --seq 1024,4096,16384 --rep 60 --out /tmp/p >> $OUT/peers.log 2>&1; echo "peers exit $?"; }
grep -E "geomean" $OUT/peers.log
step "sm90_check --no-bench (dense, decode)"
l=$(left); [ $l -gt 15 ] && { timeout $l $B/sm90_check --no-bench > $OUT/sm90_check.log 2>&1; echo "sm90_check exit $?"; }
grep -E "^FAIL|passed|failed" $OUT/sm90_check.log | head
step done
