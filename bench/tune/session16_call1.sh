#!/usr/bin/env bash
# Session 16, call 1 (carry .bundle .bundle-v1 .gl): session16_first.sh (checks, conformance on both CUDA paths, the
# grid twice, the peers: issue 4's same-call table), then
#  - the last wave's cost in the non-causal persistent launches: d128 / d256 non-causal 16k at B = 1 with H = 16 / 8
#    (2048 / 1024 tiles: 15.5 / 7.8 waves on 132 SMs) against H = 33 (4224 tiles: 32.0 waves), twice interleaved. No
#    tail loss: equal TFLOP/s; a lock-step last wave: H = 33 ahead by ~3%.
#  - nopp (d128 causal without pingpong, FT_SM90_CFG128C="2:128:2:1") against main on d128's grid, twice interleaved:
#    the pingpong turn at a tile's first block was d128 causal 512's top stall (session 15 call 8).
# Files: main.log checks.log conformance.log grid.log tail.log nopp.log
set -u
bash "$(dirname "$0")/session16_first.sh"
FT_LOG=extra.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "tail"
for rep in 1 2; do
  for c in 128,16384,0,16,1 128,16384,0,33,1 256,16384,0,8,1 256,16384,0,33,1; do
    timeout 60 "$FT_BUNDLE"/sm90_check --bench-only --cell $c >> "$OUT/tail.log" 2>&1
  done
done
cat "$OUT/tail.log"
step "nopp"
for rep in 1 2; do
  for b in /tmp/s16/sm90_check_main .bundle-v1/sm90_check_nopp; do
    echo "== $b" >> "$OUT/nopp.log"
    timeout 100 "$b" --bench-only --grid --grid-d 128 >> "$OUT/nopp.log" 2>&1
  done
done
grep -E "^==|causal" "$OUT/nopp.log" | grep -E "^==|dispatched"
step done
