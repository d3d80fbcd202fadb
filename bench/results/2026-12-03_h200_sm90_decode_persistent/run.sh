#!/usr/bin/env bash
# cuda/decode-persistent on the H200 (issue 42's next round): the branch's checks, then main's library, the persistent
# grid (pers, commit 1: 32-key stages, 8 of them, one CTA an SM) and the branch tip (pers64: 64-key stages, 4 of them)
# timed against cuDNN in the same process, one process a library in turn, interleaved (round 2 reversed).
# Carry .h200 and .gl; run from the repository root: bash .h200/run.sh. Whole run under ~8.5 minutes (time guards).
set -u
H=$PWD/.h200
FT_BUNDLE=.h200/pers64 . bench/tools/device_lib.sh
python3 - "$H" <<'PY'
import lzma, os, sys
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        if f.endswith(".xz"):
            src = os.path.join(root, f)
            with lzma.open(src) as i, open(src[:-3], "wb") as o:
                o.write(i.read())
            os.chmod(src[:-3], 0o755)
PY
md5sum "$H"/*/libflashtile.so.0
# tl T: a step's timeout, T or what is left of 500 s from the start (less 5), whichever is less; < 25: skip the step.
tl() { local left=$(( 500 - ($(date +%s) - t0) - 5 )); [ "$left" -lt "$1" ] && echo "$left" || echo "$1"; }

step "sm90_check --no-bench (tip: pers64)"
timeout "$(tl 150)" "$H/pers64/sm90_check" --no-bench > "$OUT/sm90_check.log" 2>&1; echo "exit $?"
grep -E "^FAIL|passed|failed" "$OUT/sm90_check.log" | head -20
step "conformance serving (tip)"
timeout "$(tl 60)" "$H/pers64/flashtile_tests" --ft-backend=cuda -tc='conformance serving*' > "$OUT/conf.log" 2>&1
echo "exit $?"
grep -E "conformance|test cases|assertions|Status" "$OUT/conf.log" | tail -12
step "sm90_check --no-bench (commit 1: pers; --tiny past 150 s)"
echo "######## pers" >> "$OUT/sm90_check.log"
if [ $(( $(date +%s) - t0 )) -lt 150 ]; then a="--no-bench"; t=100; else a="--tiny --no-bench"; t=45; fi
timeout "$(tl $t)" "$H/pers/sm90_check" $a >> "$OUT/sm90_check.log" 2>&1; echo "exit $? ($a)"
sed -n '/######## pers/,$p' "$OUT/sm90_check.log" | grep -E "^FAIL|passed|failed" | head -20

shapes="--shape 1,1,65536,32,8,128 --shape 16,1,8192,32,8,128 --shape 64,1,4096,32,8,128 --shape 128,1,2048,32,8,128"
shapes="$shapes --shape 8,16,32768,32,8,128,1"
peers() {  # peers ROUND LIB
  local t; t=$(tl 100); [ "$t" -lt 25 ] && { echo "skipped (time) round $1 $2"; return; }
  echo "######## round $1 $2" >> "$OUT/peers.log"
  FLASHTILE_LIBRARY=$H/$2/libflashtile.so.0 timeout "$t" python3 bench/peers.py --seq 3 --dtype bf16 --peers cudnn \
    --flashtile-paths cuda_sm90 $shapes --out "/tmp/peers_$2_$1" >> "$OUT/peers.log" 2>&1
  echo "exit $? round $1 $2"
}
step "peers round 1"
for v in main pers pers64; do peers 1 "$v"; done
grep -E "^######## |^(cudnn|flashtile)" "$OUT/peers.log"
step "paged vs contiguous"
for v in main pers pers64; do
  t=$(tl 80); [ "$t" -lt 25 ] && { echo "skipped (time) paged $v"; continue; }
  echo "######## $v" >> "$OUT/paged.log"
  FLASHTILE_LIBRARY=$H/$v/libflashtile.so.0 timeout "$t" python3 bench/decode_paged.py --paths cuda_sm90 \
    --out "/tmp/paged_$v" >> "$OUT/paged.log" 2>&1
  echo "exit $? paged $v"
done
grep -E "^######## |B=" "$OUT/paged.log" | head -70
step "peers round 2 (reversed)"
for v in pers64 pers main; do peers 2 "$v"; done
sed -n '/round 2/,$p' "$OUT/peers.log" | grep -E "^######## |^(cudnn|flashtile)"
step "done"
