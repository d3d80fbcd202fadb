#!/usr/bin/env bash
# The single device call of this result (README.md): conformance of every candidate default, then GPU-timestamp
# timings of the Vulkan variants. Run from the repository root on the device, bundle in .bundle-vk, logs to $OUT.
set -u
B=.bundle-vk
export LD_LIBRARY_PATH=$PWD/$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
t0=$(date +%s)
log() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$OUT/steps.log"; }
late() { [ $(( $(date +%s) - t0 )) -ge "${BUDGET:-205}" ] && { log "SKIPPED (time): $*"; return 0; }; return 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; } > "$OUT/env.txt" 2>&1
timeout 20 $B/flashtile info > "$OUT/info.txt" 2>&1
T=$B/flashtile_tests
conf() {  # conf NAME TIMEOUT [ENV=..]...
  local name=$1 to=$2; shift 2
  late "conformance $name" && return
  log "conformance $name: $*"
  local tc='conformance*'; case "$*" in *FLASHTILE_VK_PATHS*) tc='conformance: every*' ;; esac
  env "$@" FLASHTILE_TEST_SEED=7 timeout "$to" $T --ft-backend=vulkan -tc="$tc" > "$OUT/conf_$name.log" 2>&1
  echo "rc=$?" >> "$OUT/conf_$name.log"; tail -4 "$OUT/conf_$name.log" | tee -a "$OUT/steps.log"
}
bench() {  # bench NAME TIMEOUT PATH [ENV=..]... -- [extra bench args]
  local name=$1 to=$2 path=$3; shift 3
  local envs=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done; [ $# -gt 0 ] && shift
  late "bench $name" && return
  log "bench $name ($path): ${envs[*]} $*"
  env "${envs[@]}" timeout "$to" $B/flashtile_bench --backend vulkan --path "$path" --dtype f16 --dim "${DIMS:-64,128,256}" \
    --seq 1024,4096,16384 --warmup 2 --iters 10 --csv "$OUT/bench_$name.csv" "$@" > "$OUT/bench_$name.log" 2>&1
  echo "rc=$?" >> "$OUT/bench_$name.log"
}
P2=FLASHTILE_VK_PATHS=vulkan_coopmat2
P1=FLASHTILE_VK_PATHS=vulkan_coopmat
# 1. every path at the defaults (row-reversal for causal is new in all shaders)
conf default 60 FLASHTILE_X=0
# 2. timings: coopmat2 candidates, KHR candidates, portable
bench cm2_clamp 25 vulkan_coopmat2 FLASHTILE_VKCM2_CLAMP=1
bench cm2_stage 25 vulkan_coopmat2 FLASHTILE_VKCM2_STAGE=1
bench cm2_clamp_64 25 vulkan_coopmat2 FLASHTILE_VKCM2_CLAMP=1 FLASHTILE_VKCM2_TILE=64,64,128
bench khr_default 20 vulkan_coopmat FLASHTILE_X=0
bench khr_8_32 20 vulkan_coopmat FLASHTILE_VKCM_TILE=8,32,1,1
bench khr_noreverse 15 vulkan_coopmat FLASHTILE_VK_REVERSE_ROWS=0 -- --causal 1
bench cm2_default 30 vulkan_coopmat2 FLASHTILE_X=0
bench cm2_unclamped_64 25 vulkan_coopmat2 FLASHTILE_VKCM2_TILE=64,64,128
bench cm2_stage_128 25 vulkan_coopmat2 FLASHTILE_VKCM2_STAGE=1 FLASHTILE_VKCM2_TILE=128,64,256
# 3. conformance of the candidate defaults (coopmat2 / KHR path only)
conf cm2_clamp 25 $P2 FLASHTILE_VKCM2_CLAMP=1
conf cm2_stage 25 $P2 FLASHTILE_VKCM2_STAGE=1
conf cm2_clamp_64 25 $P2 FLASHTILE_VKCM2_CLAMP=1 FLASHTILE_VKCM2_TILE=64,64,128
conf khr_8_32 25 $P1 FLASHTILE_VKCM_TILE=8,32,1,1
DIMS=128 bench portable 30 vulkan_portable FLASHTILE_X=0
conf cm2_unclamped_64 20 $P2 FLASHTILE_VKCM2_TILE=64,64,128
conf cm2_stage_128 20 $P2 FLASHTILE_VKCM2_STAGE=1 FLASHTILE_VKCM2_TILE=128,64,256
log done
