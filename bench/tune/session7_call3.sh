#!/usr/bin/env bash
# Session 7, device call 3 (carry: .bundle .gl; ~420 s): the library as it lands with staged O (d64 non-causal at every
# length, d128 non-causal to 4096 keys; sm90_stages_o). sm90_check on every launch mode (cases on both sides of the
# 4096 limit), racecheck on --tiny (the quick set ran past 150 s and 300 s in calls 1 and 2; stdout is line-buffered
# now, so a cut run shows its last case), memcheck, conformance; the whole grid with peers, a second grid if time is
# left. Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
step "checks"
ck .bundle/sm90_check --no-bench --ctas 0
echo "== racecheck --tiny --ctas 5" >> "$OUT/checks.log"
timeout 150 compute-sanitizer --tool racecheck .bundle/sm90_check --tiny --no-bench --ctas 5 2>&1 | tail -30 >> "$OUT/checks.log"
echo "exit ${PIPESTATUS[0]}" >> "$OUT/checks.log"
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
step "grid"
g .bundle/sm90_check --bench-only --grid
FT_PEERS_TIMEOUT=120 peers_grid
step "more checks"
for ctas in 7 -1; do ck .bundle/sm90_check --no-bench --ctas $ctas; done
ck compute-sanitizer --tool memcheck .bundle/sm90_check --quick --no-bench --ctas 0
left 330 && ck compute-sanitizer --tool racecheck .bundle/sm90_check --tiny --no-bench --ctas -1
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
conformance cuda
left 430 && conformance vulkan
left 470 && g .bundle/sm90_check --bench-only --grid
step done
