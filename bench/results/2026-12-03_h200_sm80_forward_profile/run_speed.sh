#!/usr/bin/env bash
# sm80 forward (cuda/sm80-fast) on the H200, ordered for a short device window: correctness, one FA2 round of both
# libraries, conformance, varlen prefill, then the rest while time is left (kEnd).
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
NEW=$PWD/$B/libflashtile.so.0 MAIN=$PWD/$B/main/libflashtile.so.0
kEnd=${kEnd:-300}
left() { echo $(( kEnd - ($(date +%s) - t0) )); }
peers() {
  local tag=$1 lib=$2 l; l=$(left); shift 2
  [ "$l" -lt 30 ] && { echo "$tag skipped (time)"; return; }
  [ "$l" -gt 90 ] && l=90
  echo "######## $tag" >> "$OUT/peers.log"
  rm -rf /tmp/p
  FLASHTILE_LIBRARY=$lib timeout "$l" python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
    --out /tmp/p "$@" >> "$OUT/peers.log" 2>&1
  echo "$tag exit $?"
  { echo "# $tag"; cat /tmp/p/peers.csv 2>/dev/null; } >> "$OUT/peers.csv"
}
step "cuda_sm80_check (checks.log)"
echo "== cuda_sm80_check" >> $OUT/checks.log
timeout 80 "$B"/cuda_sm80_check --no-time >> $OUT/checks.log 2>&1; echo "exit $?" | tee -a $OUT/checks.log
grep -E "passed|FAIL" $OUT/checks.log | tail -5
step "speed round 1"
seqs=512,1024,2048,4096,8192,16384
peers "new r1" "$NEW" --dim 64,128 --seq $seqs
peers "main r1" "$MAIN" --dim 64,128 --seq $seqs
grep -E "^######## |geomean" "$OUT/peers.log"
step "conformance cuda_sm80"
l=$(left); [ $l -gt 70 ] && l=70
[ $l -gt 20 ] && { timeout $l "$B"/flashtile_tests --ft-backend=cuda --ft-path=cuda_sm80 -tc='conformance*' > "$OUT/conformance.log" 2>&1; echo "conformance exit $?"; }
grep -E "test cases|assertions|Status|FAILED" "$OUT/conformance.log" | head -6
step "varlen prefill (varlen.log)"
for v in NEW MAIN; do
  l=$(left); [ $l -gt 40 ] && l=40; [ $l -lt 15 ] && break
  echo "######## $v" >> $OUT/varlen.log
  FLASHTILE_LIBRARY=${!v} timeout $l python3 bench/varlen_prefill.py --rep 100 >> $OUT/varlen.log 2>&1; echo "varlen $v exit $?"
done
cat $OUT/varlen.log | grep -v "^$" | head -30
step "serving check"
l=$(left); [ $l -gt 60 ] && l=60
[ $l -gt 15 ] && { echo "== cuda_sm80_serving_check" >> $OUT/checks.log; timeout $l "$B"/cuda_sm80_serving_check >> $OUT/checks.log 2>&1; echo "exit $?" | tee -a $OUT/checks.log; }
step "speed round 2"
peers "main r2" "$MAIN" --dim 64,128 --seq $seqs
peers "new r2" "$NEW" --dim 64,128 --seq $seqs
step "done"
