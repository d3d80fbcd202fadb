#!/usr/bin/env bash
# Session 23's first call (~450 s; build: bash bench/tune/session23_build.sh on branch wip/s22-sumsafe; carry .bundle
# .bundle-s23 .gl). Session 22 call 8 priced lazy rescaling checked on the row sums of P, with no row maxima (kLazy 4
# then, measurement only: wrong where P overflows), at 1.036/1.038x mode 2 (d64 +3..8%, d128 non-causal 16k 701).
# The branch makes it safe as kLazy 3: a block whose row sum is inf (P lost) has the warp's S recomputed by mma.sync
# from Q and K in global memory (sm90_redo_s), then runs the exact path. New tests drive that repair: sm90_check's
# "jump" cases and the conformance case "a running max that jumps past 2^128" (key 3 or 5 x150, in the block visited
# last).
#  - Checks of the library (.bundle: mode 3 at d128/d256, 2 at d64): tile_tests, sm90_check, racecheck and memcheck
#    --tiny (jump cases included), cuda_sm80_check, the conformance suite on the CUDA paths; sm90_check of sum64.
#  - Where d64's spills sit with mode 3 (sum64): the STL/LDL lines of its d64 kernels (spills.txt).
#  - The whole grid twice interleaved: main (mode 2), land (.bundle), sum64 (mode 3 at d64 too); then the peers.
# Files: main.log checks.log conformance.log grid.log spills.txt
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check .bundle-s23/sm90_check_sum64
sm90_checks
ck "$FT_BUNDLE"/cuda_sm80_check
ck .bundle-s23/sm90_check_sum64 --no-bench
grep -E "^==|passed|FAIL|^exit" "$OUT/checks.log" | tail -6
conformance cuda
step "spills"
# Per d64 kernel: its HGMMAs' first and last offsets (the main loop lies between), then each STL/LDL (at most 16).
cuobjdump -sass .bundle-s23/sm90_check_sum64 2>/dev/null |
  awk '/Function :/ {if (f ~ /Li64E/) print f ": HGMMA " h0 ".." h1; f = $3; h0 = ""} \
       /HGMMA/ {if (h0 == "") h0 = $1; h1 = $1} \
       /STL|LDL/ && f ~ /Li64E/ {n[f]++; if (n[f] <= 16) print f ": " $0} \
       END {if (f ~ /Li64E/) print f ": HGMMA " h0 ".." h1}' > "$OUT/spills.txt"
wc -l < "$OUT/spills.txt"
cp "$FT_BUNDLE"/sm90_check .bundle-s23/sm90_check_land
ab .bundle-s23 main land sum64
FT_PEERS_TIMEOUT=100 peers_grid
step done
