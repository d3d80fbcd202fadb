#!/usr/bin/env bash
# Planned first device call of session 6, on branch wip/sm90-dynamic (dynamic tile scheduling for non-causal
# launches; the causal kernels are byte-identical to main's). Build here first (~5 min, repo root):
#   git checkout wip/sm90-dynamic && cmake --build build -j2 && bash bench/make_bundle.sh build .bundle &&
#   rm -rf build-var12 && tests/cuda/build_variants.sh build-var12 'br=' &&
#   git worktree add -f /tmp/wtmain main && /tmp/wtmain/tests/cuda/build_variants.sh "$PWD/build-var12" 'head=' &&
#   git worktree remove --force /tmp/wtmain && rm -rf build-var12/obj
# run(carry=[".bundle", ".gl", "build-var12"], timeout_s=560, command='bash bench/tune/session6_call1.sh') (~420 s):
# 1. The branch's kernels: sm90_check on every launch mode, racecheck and memcheck; the library's conformance suite
#    on both backends (the bundle is the branch's).
# 2. The whole grid, main's kernel (head) and the branch's (br) twice interleaved, then cuDNN/FA2 in the same call.
# Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
for ctas in 0 7 -1; do ck build-var12/sm90_check_br --no-bench --ctas $ctas; done
ck compute-sanitizer --tool racecheck build-var12/sm90_check_br --quick --no-bench --ctas 5
ck compute-sanitizer --tool memcheck build-var12/sm90_check_br --quick --no-bench --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
conformance cuda vulkan
ab build-var12 head br
FT_PEERS_TIMEOUT=120 peers_grid
step done
