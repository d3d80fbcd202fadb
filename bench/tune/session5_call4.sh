#!/usr/bin/env bash
# Session 5, device call 4 (carry: .bundle .gl build-old build-var10). Call 3 found the run-2 kernel (6ec0cab, one CTA
# per tile) 1.7% faster at d128 16k than today's persistent launch, and today's kernel launched one CTA per tile ~6%
# slower than it (call 2). Which change costs it? build-var10 (tests/cuda/build_variants.sh): base (HEAD), zero (O
# zeroed per tile, every P·V accumulates, as in 6ec0cab), qarr (Q's release after the loop, not a branch in it), both.
# Each at d128 16k and 1k non-causal, configured launch and one CTA per tile, twice interleaved. Files: main.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
step "variants"
for rep in 1 2; do
  g build-old/sm90_check_6ec0cab --bench-only
  for v in base zero qarr both; do
    for cell in 128,16384,0 128,1024,0; do
      g build-var10/sm90_check_$v --bench-only --cell $cell
      g build-var10/sm90_check_$v --bench-only --cell $cell --ctas -1
    done
  done
done
grep -E "^== |d=128" "$OUT/grid.log" | grep -B1 "d=128" | grep -v "^--"
step done
