#!/usr/bin/env bash
# cuda/ldsm-order on the H200: B operands' ldmatrix order (no register moves before each mma). Correctness, then the
# sm80 forward against FA2 (this branch's library and main's, interleaved), then sm90_check (its decode shares the
# change) while time is left (kEnd).
set -u
B=.bundle_81
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
kEnd=${kEnd:-160}
left() { echo $(( kEnd - ($(date +%s) - t0) )); }
step "checks (checks.log)"
{ echo "== cuda_sm80_check"; timeout 40 $B/cuda_sm80_check --no-time; echo "exit $?"; } >> $OUT/checks.log 2>&1
{ echo "== tile_tests"; timeout 30 $B/tile_tests; echo "exit $?"; } >> $OUT/checks.log 2>&1
grep -E "^==|passed|FAIL|exit|assertions" $OUT/checks.log
step "sm80 forward against FA2"
for v in NEW MAIN; do
  l=$(left); [ $l -gt 40 ] && l=40; [ $l -lt 20 ] && break
  echo "######## $v" >> $OUT/peers.log
  FLASHTILE_LIBRARY=${!v} timeout $l python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
    --dim 64,128 --seq 1024,4096,16384 --rep 60 --out /tmp/p_$v >> $OUT/peers.log 2>&1; echo "$v exit $?"
done
grep -E "^######## |geomean" $OUT/peers.log
step "sm90_check --no-bench (decode cases included)"
l=$(left); [ $l -gt 15 ] && { timeout $l $B/sm90_check --no-bench > $OUT/sm90_check.log 2>&1; echo "sm90_check exit $?"; }
grep -E "^FAIL|passed|failed" $OUT/sm90_check.log | head
step done
