#!/usr/bin/env bash
# Session 17, call 6 (~260 s; carry .bundle .bundle-main .gl): the landed library (narrow first blocks in d64's causal
# short kernel only; the producer role in a function of its own). Checks (tile_tests, sm90_check, racecheck and
# memcheck --tiny, conformance on both CUDA paths); the whole grid twice interleaved, main (57c4203) against land (the
# bundle); a third run of the d64 grid; the peers (issue 4's same-call table).
# run(carry=[".bundle", ".bundle-main", ".gl"], timeout_s=420, command='bash bench/tune/session17_call6.sh')
# Analyse: bench/tune/ab_grid.py grid.log main; bench/tune/parse_grid.py grid.log. Files: main.log checks.log
# conformance.log grid.log. Arguments (call 8's): the baseline's name (main), its sm90_check_NAME's folder
# (.bundle-main), the head dims of the third run ("64").
set -u
base=${1:-main} base_dir=${2:-.bundle-main} third=${3:-64}
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
mkdir -p /tmp/s17 && cp "$base_dir/sm90_check_$base" /tmp/s17/ && cp "$FT_BUNDLE"/sm90_check /tmp/s17/sm90_check_land
ab /tmp/s17 "$base" land
step "d${third// /\/d} third run"
for d in $third; do for v in "$base" land; do g /tmp/s17/sm90_check_$v --bench-only --grid --grid-d "$d"; done; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
