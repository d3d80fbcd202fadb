#!/usr/bin/env bash
# One device call for the sm90 kernel family: tile unit tests, the correctness + timing driver (plus schedule
# variants sm90_check_s* when present, on the quick case list), compute-sanitizer memcheck on small cases, the SASS
# check for HGMMA, and the torch peers (cuDNN, FA2). Logs go to $OUT.
# Usage (on the device, repo root): tests/cuda/device_run_sm90.sh <dir with tile_tests, sm90_check[_s*]>
set -u
B=${1:-build-sm90/dev}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUT/gpu.txt"
echo "== tile_tests"; timeout 30 "$B/tile_tests" 2>&1 | tee "$OUT/tile_tests.log" | tail -12
echo "== SASS HGMMA count"; for f in "$B"/sm90_check*; do echo "$f: $(cuobjdump --dump-sass "$f" 2>/dev/null | grep -c HGMMA)"; done
run() {  # name timeout args...
  local n=$1 t=$2; shift 2
  echo "== $n $*"; timeout "$t" "$B/$n" "$@" > "$OUT/tmp.log" 2>&1; echo "exit $?" >> "$OUT/tmp.log"
  { echo "== $n $*"; cat "$OUT/tmp.log"; } >> "$OUT/checks.log"  # one file: at most 8 come back
  grep -v "^ok " "$OUT/tmp.log" | tail -14; rm -f "$OUT/tmp.log"
}
# Variants (one binary per shapes/schedule experiment) run the full case list: any of them may become the default.
for f in "$B"/sm90_check_*; do [ -e "$f" ] && run "$(basename "$f")" "${VARIANT_TIMEOUT:-45}" ${VARIANT_ARGS:-}; done
[ -n "${SKIP_DEFAULT:-}" ] || run sm90_check 90
echo "== memcheck"; timeout 45 compute-sanitizer --tool memcheck "$B/sm90_check" --quick --no-bench > "$OUT/memcheck.log" 2>&1
echo "exit $?" >> "$OUT/memcheck.log"; grep -v "^ok " "$OUT/memcheck.log" | tail -6
echo "== peers"; PYTHONUNBUFFERED=1 timeout 50 python3 bench/tools/sm90_peer.py ${PEER_ARGS:-} 2>&1 | tee "$OUT/peers.log"
