#!/usr/bin/env bash
# Session 14 call 11 (~150 s; carry .bundle-v14 and .gl): the mbarrier spins of calls 7-9 (SYNCS 3.8M warp
# instructions against cuDNN's 0.45M at d64 causal 512). hint: tile::wait with a suspend-time hint on
# mbarrier.try_wait.parity (FT_MBAR_SUSPEND_NS=10000000: the thread may sleep until the phase completes, up to the
# hint), against final (this tree without it), the whole grid twice interleaved; ncu's instruction count at d64
# causal 512.
# run(carry=[".bundle-v14", ".gl"], timeout_s=240, command='bash bench/tune/session14_call11.sh')
# Files: main.log checks.log grid.log ncu.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-v14
step "checks"
ck $B/sm90_check_hint --no-bench
grep -E "^==|^exit|passed|FAIL" "$OUT/checks.log"
ab $B final hint
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step "ncu"
timeout 40 ncu --clock-control none --launch-skip 4 --launch-count 1 --metrics smsp__inst_executed.sum,gpu__time_duration.sum \
  --kernel-name regex:sm90_fwd $B/sm90_check_hint --bench-only --cell 64,512,1 > "$OUT/ncu.log" 2>&1
grep -E "inst_executed|duration" "$OUT/ncu.log"
step done
