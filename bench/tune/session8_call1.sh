#!/usr/bin/env bash
# Planned first device call of session 8 (~540 s): staged O (FT_SM90_OSTAGE=1: d64 non-causal at every length, d128
# non-causal to 4096 keys) after the fix of its shared-buffer hand-over, which session 7 could not run (its device time
# was spent). Session 7 call 3's racecheck and memcheck stopped at the first d128 staged case (their plain checks
# passed on every launch mode): d128's two consumers share one O buffer, and a consumer's wait on o_empty could
# alias a phase two behind when the storer lagged. Now each consumer waits on its own o_empty, which the storer
# completes for the consumer whose turn is next.
# Build here first (~3 min, repo root): rm -rf build-var19 && tests/cuda/build_variants.sh build-var19 'head=' \
#   'ostage=-DFT_SM90_OSTAGE=1' 'ostall=-DFT_SM90_OSTAGE=1 -DFT_SM90_OSTAGE_MAX128=1073741824' \
#   'ostc=-DFT_SM90_OSTAGE=1 -DFT_SM90_OSTAGE_CAUSAL=1073741824' 'notma=-DFT_SM90_OTMA=0' \
#   'ppe=-DFT_SM90_PP_EARLY=1' 'ppeos=-DFT_SM90_PP_EARLY=1 -DFT_SM90_OSTAGE=1'
# run(carry=[".bundle", ".gl", "build-var19"], timeout_s=590, command='bash bench/tune/session8_call1.sh')
# 1. sm90_check of ostage on every launch mode and of the other variants; the sanitizers come last (5.): racecheck
#    (two launch modes) and memcheck on --tiny, memcheck on --quick, ppeos's racecheck, head's racecheck on --tiny for
#    a reference time. stdout is line-buffered: a cut run shows its last case.
# 2. The whole grid twice interleaved, head against ostage and ostall (d128 non-causal staged at every length: the
#    fix changed its code, so check whether 8k/16k still lose) and ostc (causal d64/d128 staged, persistent at every
#    length; d64 causal spills 12 bytes with it; the grid times both launch modes, so its per-tile column is staged
#    without persistence), then peers. The short causal cells are the furthest from cuDNN (0.71x at d64 512/1k).
# 3. ppe / ppeos on d128 only (the pingpong head dim), without and with staged O: consumer 1 hands consumer 0 the next
#    tile's first turn with its last P·V instead of after its epilogue (session 7 call 1's ncu at d128 non-causal 512:
#    881 stall samples on the instruction after that named barrier's sync, 383 without O stores), so consumer 0's next
#    Q·Kᵀ overlaps consumer 1's epilogue. Checked on two launch modes (and under racecheck at the end).
# 4. notma on d256 only (direct O stores instead of the Q buffer's TMA store): d256 non-causal has been persistent with
#    the dynamic scheduler since session 6, where the Q buffer's store holds back the next Q load (6-8% in session 6's
#    ablation); OTMA was chosen on one-CTA-per-tile launches (session 4).
# 5. The sanitizers, last (~380 s in), so that a hang cannot cost the timings.
# If the sanitizers are clean and ostage is faster: drop the #if around o_stage_max_sk in sm90_traits.hpp and run
# bench/tune/session8_call2.sh (the library built with it on: .bundle-os from build-os).
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
B=build-var19
. "$(dirname "$0")/device_env.sh"
step "checks"
for ctas in 0 7 -1; do ck $B/sm90_check_ostage --no-bench --ctas $ctas; done
ck $B/sm90_check_ostc --no-bench --quick --ctas 0
ck $B/sm90_check_notma --no-bench --quick --ctas 0
ck $B/sm90_check_ppeos --no-bench --ctas 0
ck $B/sm90_check_ppe --no-bench --quick --ctas 7
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
ab $B head ostage ostall ostc
for rep in 1 2; do for v in ppe ppeos; do g $B/sm90_check_$v --bench-only --grid --grid-d 128; done; done
FT_PEERS_TIMEOUT=120 peers_grid
for rep in 1 2; do g $B/sm90_check_notma --bench-only --grid --grid-d 256; done
# The sanitizers last, so that a hang cannot cost the timings; a timeout skips the staged kernel's other runs.
step "sanitizers"
san 90 racecheck $B/sm90_check_ostage --tiny --no-bench --ctas 5 &&
  san 60 racecheck $B/sm90_check_ostage --tiny --no-bench --ctas -1 &&
  san 45 memcheck $B/sm90_check_ostage --tiny --no-bench --ctas 0
san 60 racecheck $B/sm90_check_ppeos --tiny --no-bench --ctas 5
san 30 racecheck $B/sm90_check_head --tiny --no-bench --ctas 5
san 60 memcheck $B/sm90_check_ostage --quick --no-bench --ctas 7
grep -E "^==|^exit|passed|FAIL|ERROR|hazard|SUMMARY" "$OUT/checks.log"
step done
