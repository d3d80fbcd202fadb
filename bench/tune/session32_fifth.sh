#!/usr/bin/env bash
# Session 32's fifth call (~120 s; carry .bundle-s32 .bundle-s32b .bundle-s32c .gl): is the stream counter's loss in
# sm90_check's bench (calls 2, 3) a property of its short bursts (100 ms warm-up with a sync after each launch, then 7
# batches of 10)? One cell a process (--cell), base / sr / srm interleaved, with the 100 ms warm-up and with 1500 ms.
# Files: main.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
mkdir -p /tmp/v && cp .bundle-s32/sm90_check_base .bundle-s32b/sm90_check_sr .bundle-s32c/sm90_check_srm /tmp/v/
for warm in 100 1500; do for rep in 1 2; do for cell in 128,1024,0 64,2048,0 128,4096,1; do for v in base sr srm; do
  echo "== /tmp/v/sm90_check_$v warm $warm cell $cell" >> "$OUT/grid.log"
  timeout 60 /tmp/v/sm90_check_$v --bench-only --cell $cell --warm-ms $warm >> "$OUT/grid.log" 2>&1
done; done; done; done
grep -E "^==|bench" "$OUT/grid.log" | paste - - | awk '{print $2, $4, $6, $(NF-6), $(NF-5)}' | sed 's|/tmp/v/sm90_check_||'
step done
