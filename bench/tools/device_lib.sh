# Helpers for an experiment's device script (on the device, repo root; `. bench/tools/device_lib.sh`). Sourcing it
# logs everything to $OUT/$FT_LOG, unpacks the carried Vulkan loader (.gl) and points the loader and the binaries at
# it and at the bundle ($FT_BUNDLE, default .bundle: set it before sourcing to run another build's bundle), and
# defines: step (a timed heading), g (one timed grid binary, appended to $OUT/grid.log, killed after
# $FT_GRID_TIMEOUT s), peers_grid, conformance, ab, vk (below), cells (--shape arguments for flashtile_bench:
# B = 16384/S, H = 2048/d), ck (a check, its verdict lines appended to $OUT/checks.log), clocks_start/mark (SM clock
# samples every 100 ms into $OUT/clocks.log, with markers).
# Scripts sourcing this must not use a bare `wait`: with stdout in the tee below it hangs past every job's end until
# the device limit; wait on explicit PIDs or run sequentially. Keep at most 8 files under $OUT (the device tool
# brings back 8). An experiment's script lives with its patch in the result folder that measured it.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/ck
exec > >(tee -a "$OUT/${FT_LOG:-run.log}") 2>&1
t0=$(date +%s); step() { echo; echo "==== $* ($(( $(date +%s) - t0 )) s)"; }
g() { echo "== $*" >> "$OUT/grid.log"; timeout "${FT_GRID_TIMEOUT:-100}" "$@" >> "$OUT/grid.log" 2>&1; echo "exit $?" >> "$OUT/grid.log"; }
# peers_grid: cuDNN and FA2 on the same grid (bench/tools/sm90_peer.py), appended to grid.log.
peers_grid() { timeout "${FT_PEERS_TIMEOUT:-100}" python3 bench/tools/sm90_peer.py --grid "$@" >> "$OUT/grid.log" 2>&1; echo "peers exit $?" >> "$OUT/grid.log"; grep "^exit\|peers exit" "$OUT/grid.log"; }
# vk TAG [VAR=VALUE...] flashtile_bench ARGS: one bench process, its CSV appended to vk.csv under "# TAG", its
# output to vk_out.log; skipped once the run has taken $FT_VK_DEADLINE seconds, killed after $FT_VK_TIMEOUT (90).
vk() { local tag=$1; shift; if [ $(( $(date +%s) - t0 )) -gt "${FT_VK_DEADLINE:-420}" ]; then echo "skipped (time) $tag"; return; fi; echo "# $tag" >> "$OUT/vk.csv"; rm -f /tmp/vk.csv; timeout "${FT_VK_TIMEOUT:-90}" env "$@" --csv /tmp/vk.csv >> "$OUT/vk_out.log" 2>&1; echo "exit $? $tag"; cat /tmp/vk.csv >> "$OUT/vk.csv" 2>/dev/null; }
cells() { for d in $1; do for s in $2; do for c in $3; do printf -- "--shape %d,%d,%d,%d,%d,%d,%d " $((16384/s)) $s $s $((2048/d)) $((2048/d)) $d $c; done; done; done; }
step env; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
FT_BUNDLE=${FT_BUNDLE:-.bundle}
python3 bench/tools/unxz_bundle.py "$FT_BUNDLE"  # binaries carried xz-compressed, unpacked in place
export LD_LIBRARY_PATH=$PWD/$FT_BUNDLE PYTHONUNBUFFERED=1
# conformance BACKEND...: the library's conformance suite ($FT_BUNDLE) on each backend, into $OUT/conformance.log.
conformance() {
  step "conformance"
  for b in "$@"; do
    timeout "${FT_CONF_TIMEOUT:-150}" "$FT_BUNDLE"/flashtile_tests --ft-backend="$b" -tc='conformance*' >> "$OUT/conformance.log" 2>&1
    echo "$b conformance exit $?"
  done
  grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
}
# ab DIR NAME...: the whole grid of each DIR/sm90_check_NAME, twice, the binaries interleaved (into grid.log).
ab() {
  local dir=$1 rep v; shift
  step "grid A/B"
  for rep in 1 2; do for v in "$@"; do g "$dir/sm90_check_$v" --bench-only --grid; done; done
}
# san TIMEOUT TOOL BINARY ARGS...: a compute-sanitizer run (racecheck, memcheck), its last lines and exit status into
# checks.log; 124: timed out.
san() {
  local t=$1 tool=$2; shift 2
  echo "== $tool $*" >> "$OUT/checks.log"
  local s0=$(date +%s)
  timeout "$t" compute-sanitizer --error-exitcode 3 --tool "$tool" "$@" 2>&1 | tail -20 >> "$OUT/checks.log"
  local rc=${PIPESTATUS[0]}
  echo "exit $rc ($(( $(date +%s) - s0 )) s)" >> "$OUT/checks.log"
  return $rc
}
# ab3 DIR NAME...: ab, a third run of the grid, then the peers (the sm90 table, peers from the same run, on any of the binaries).
ab3() {
  local dir=$1 v; shift
  ab "$dir" "$@"
  step "third run"
  for v in "$@"; do g "$dir/sm90_check_$v" --bench-only --grid; done
  FT_PEERS_TIMEOUT=100 peers_grid
}
# smoke BINARY...: sm90_check --tiny --no-bench of each (60 s at most); the first that fails or hangs ends the run.
smoke() {
  local b r
  step "smoke"
  for b in "$@"; do
    timeout 60 "$b" --tiny --no-bench 2>&1 | grep -E "^FAIL|passed" | tail -12; r=${PIPESTATUS[0]}
    echo "smoke: $b --tiny $r"
    if [ "$r" != 0 ]; then step "stopped"; exit 0; fi
  done
}
# smoke_some DIR NAME...: sm90_check --tiny --no-bench of each DIR/sm90_check_NAME; sets vs to the names that passed
# (a variant that fails or hangs is left out of what follows, not the whole run, as smoke would).
smoke_some() {
  local dir=$1 v r; shift
  step "smoke"
  vs=""
  for v in "$@"; do
    timeout 60 "$dir/sm90_check_$v" --tiny --no-bench 2>&1 | grep -E "^FAIL|passed" | tail -6
    r=${PIPESTATUS[0]}; echo "smoke: $v $r"; [ "$r" = 0 ] && vs="$vs $v"
  done
}
# in_vs NAME: whether NAME is land or a variant that passed smoke_some (in $vs).
in_vs() { [ "$1" = land ] && return 0; case " $vs " in *" $1 "*) return 0;; esac; return 1; }
# vary DIR REPS ARGS...: full sm90_check of each of smoke_some's $vs, then REPS rounds of the grid (sm90_check
# --bench-only --grid ARGS) of land (the bundle's sm90_check, copied to DIR) and each of them, interleaved.
vary() {
  local dir=$1 reps=$2 rep v; shift 2
  step "checks"
  for v in $vs; do ck "$dir/sm90_check_$v" --no-bench; done
  grep -E "^==|passed|FAIL|^exit" "$OUT/checks.log" | tail -12
  cp "$FT_BUNDLE"/sm90_check "$dir/sm90_check_land"
  step "grid A/B $*"
  for rep in $(seq "$reps"); do for v in land $vs; do g "$dir/sm90_check_$v" --bench-only --grid "$@"; done; done
}
# checked_ab DIR REPS NAME [GRID ARGS...]: smoke_some DIR NAME, racecheck --tiny of it where it passed, then vary DIR
# REPS ARGS (its full check, then REPS rounds of the grid, land and NAME interleaved).
checked_ab() {
  local dir=$1 reps=$2 name=$3; shift 3
  smoke_some "$dir" "$name"
  in_vs "$name" && san 150 racecheck "$dir/sm90_check_$name" --tiny --no-bench
  vary "$dir" "$reps" "$@"
}
# ncu_prof NAME CELL: ncu of one sm90_check --cell launch (the fifth, clocks not locked): sections into $OUT/ncu.log,
# per-instruction source counters into $OUT/NAME.csv.gz (bench/tools/ncu_source_top.py and ncu_opcodes.py read them).
ncu_prof() {
  local s="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats"
  s="$s --section SchedulerStats --section InstructionStats --section LaunchStats --section Occupancy"
  local n="ncu --clock-control none --launch-skip 4 --launch-count 1"
  echo "######## $1 ($2)" >> "$OUT/ncu.log"
  timeout 60 $n $s --kernel-name regex:sm90_fwd "$FT_BUNDLE"/sm90_check --bench-only --cell "$2" >> "$OUT/ncu.log" 2>&1
  echo "$1 sections exit $?"
  timeout 60 $n --section SourceCounters --import-source no -f -o "/tmp/$1" --kernel-name regex:sm90_fwd \
    "$FT_BUNDLE"/sm90_check --bench-only --cell "$2" > /dev/null 2>&1
  echo "$1 source exit $?"
  ncu --import "/tmp/$1.ncu-rep" --page source --csv --print-source sass > "/tmp/$1.csv" 2>/dev/null &&
    gzip -c "/tmp/$1.csv" > "$OUT/$1.csv.gz"
}
# land_ab MAIN: the whole grid twice interleaved, MAIN (an sm90_check binary: the kernels landed before) against land
# (the bundle's sm90_check), then the peers (the sm90 table with peers from the same run: bench/tools/grid_table.py grid.log).
land_ab() {
  mkdir -p /tmp/land && cp "$1" /tmp/land/sm90_check_main && cp "$FT_BUNDLE"/sm90_check /tmp/land/sm90_check_land
  ab /tmp/land main land
  FT_PEERS_TIMEOUT=100 peers_grid
}
# cell_runs REPS "CELL..." "NAME [ARGS]"...: sm90_check --bench-only --cell CELL ARGS with NAME's binary ($FT_BIN_NAME)
# for each run, REPS times interleaved (rep, then cell, then run), under "== NAME [ARGS]" headings in $OUT/pers.log.
cell_runs() {
  local reps=$1 cells=$2 rep cell run name bin; shift 2
  for rep in $(seq "$reps"); do for cell in $cells; do for run in "$@"; do
    name=${run%% *}; bin=FT_BIN_$name
    echo "== $run" >> "$OUT/pers.log"
    # shellcheck disable=SC2086
    timeout 30 "${!bin}" --bench-only --cell "$cell" ${run#"$name"} >> "$OUT/pers.log" 2>&1
  done; done; done
}
# variant_checks DIR RACE NAME...: sm90_check --no-bench of each DIR/sm90_check_NAME, racecheck --tiny of RACE's,
# then the verdict lines of checks.log.
variant_checks() {
  local dir=$1 race=$2 v; shift 2
  step "checks"
  for v in "$@"; do ck "$dir/sm90_check_$v" --no-bench; done
  san 150 racecheck "$dir/sm90_check_$race" --tiny --no-bench
  grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log"
}
# sm90_checks: the CUDA checks of the bundle ($FT_BUNDLE) into checks.log: tile_tests, sm90_check, racecheck and
# memcheck --tiny; then their verdict lines.
sm90_checks() {
  step "checks"
  ck "$FT_BUNDLE"/tile_tests
  ck "$FT_BUNDLE"/sm90_check --no-bench
  san 150 racecheck "$FT_BUNDLE"/sm90_check --tiny --no-bench
  san 150 memcheck "$FT_BUNDLE"/sm90_check --tiny --no-bench
  grep -E "^==|^exit|passed|FAIL|test cases|hazard|ERROR SUMMARY" "$OUT/checks.log"
}
# library_checks: smoke, sm90_checks, cuda_sm80_check and conformance on both CUDA paths, of $FT_BUNDLE (a landing's
# checks; the smoke ends the run if --tiny fails).
library_checks() {
  smoke "$FT_BUNDLE"/sm90_check
  sm90_checks
  ck "$FT_BUNDLE"/cuda_sm80_check
  grep -E "^==|passed|FAIL|^exit" "$OUT/checks.log" | tail -4
  conformance cuda
}
ck() {
  echo "== $*" >> "$OUT/checks.log"
  timeout 150 "$@" 2>&1 | grep -v "^ok " | tail -12 >> "$OUT/checks.log"
  echo "exit ${PIPESTATUS[0]}" >> "$OUT/checks.log"
}
# The Vulkan slow mode is the SM clock at 345 MHz: sample it in runs that time Vulkan; kill "$clk" at
# the end.
clocks_start() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,pstate,power.draw,utilization.gpu --format=csv,noheader -lms 100 \
    >> "$OUT/clocks.log" 2>&1 &
  clk=$!
}
mark() { echo "MARK $(date -u '+%Y/%m/%d %H:%M:%S.%N' | cut -c1-23) $*" >> "$OUT/clocks.log"; }
# vk_grid_table DEADLINE: the Vulkan table (issue 5's cells) (every Vulkan path and cuda_sm90 in one flashtile_bench process, f16, tagged
# "table" in vk.csv, the SM clock sampled) and cuDNN f16 on the same cells into $OUT/peers_f16.log
# (bench/tools/vk_table.py vk.csv --peers peers_f16.log).
vk_grid_table() {
  step "vulkan table"
  clocks_start
  mark "table start"
  FT_VK_TIMEOUT=240 FT_VK_DEADLINE=$1 vk table FLASHTILE_VK_PIPELINE_STATS=1 "$FT_BUNDLE"/flashtile_bench \
    --backend vulkan,cuda --dtype f16 --warmup-ms 1000 --iters 10 --dim 64,128,256 --seq 1024,4096,16384 \
    --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable,cuda_sm90
  mark "table end"
  kill "$clk" 2>/dev/null
  timeout 60 python3 bench/tools/sm90_peer.py --vk-cells --dtype f16 --cudnn-only > "$OUT/peers_f16.log" 2>&1
  echo "peers f16 exit $?"
}
