#!/usr/bin/env bash
# Session 23 call 11 (~60 s; carry .bundle .gl: main's build with three more sm90_check cases). The repair's reads of Q
# and K through padded seq strides and GQA 4:1 (jump cases, pad 24), with the whole sm90_check.
# Files: main.log checks.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
step "checks"
ck "$FT_BUNDLE"/sm90_check --no-bench
grep -E "jump|passed|FAIL|^exit" "$OUT/checks.log" | tail -16
step done
