#!/usr/bin/env bash
# Issue 44, round 3, on the H200 (repository root; carry [".bundle_vk", ".gl"]): the backward conformance of
# vulkan_coopmat and vulkan_portable with this branch's library, then flashtile_bench's backward and forward with it
# ("new", .bundle_vk) and with main's ("main", .bundle_vk/main), interleaved, one process each, the same bench binary.
# The library is the one LD_LIBRARY_PATH names (the binaries' RUNPATH is the build machine's folder). About 5
# minutes; $OUT: run.log, vk.csv, vk_out.log, vk_conf_vulkan_coopmat.log, vk_conf_vulkan_portable.log.
set -u
FT_BUNDLE=.bundle_vk . bench/tools/device_lib.sh
V=$PWD/.bundle_vk
M=$PWD/.bundle_vk/main
for path in vulkan_coopmat vulkan_portable; do
  step "conformance backward $path (new)"
  timeout 90 "$V"/flashtile_tests --ft-backend=vulkan --ft-path=$path \
    -tc='conformance backward*,conformance variants: the backward*' > "$OUT/vk_conf_$path.log" 2>&1
  echo "exit $?"
  grep -E "backward conformance|variants backward|test cases|assertions|Status|ERROR|FAILED" "$OUT/vk_conf_$path.log" | head -10
done
# Each bench process is killed after 60 s, and none starts after 285 s.
export FT_VK_TIMEOUT=60 FT_VK_DEADLINE=285
G="--backend vulkan --path vulkan_coopmat,vulkan_portable --dtype f16 --seq 4096,16384 --iters 5 --warmup-ms 1000"
# run TAG LIBDIR [VAR=VALUE...] ARGS: one flashtile_bench process on the library in LIBDIR (vk.csv under "# TAG").
run() {
  local tag=$1 lib=$2
  shift 2
  echo "## $tag" >> "$OUT/vk_out.log"
  vk "$tag" LD_LIBRARY_PATH="$lib" "$@"
}
step "backward and forward: new and main interleaved"
# The pipelines' compiler statistics (registers, local memory) go to vk_out.log.
run "bwd new" "$V" FLASHTILE_VK_PIPELINE_STATS=1 "$V"/flashtile_bench $G --backward --dim 64,128
run "bwd main" "$M" FLASHTILE_VK_PIPELINE_STATS=1 "$V"/flashtile_bench $G --backward --dim 64,128
run "fwd new" "$V" "$V"/flashtile_bench $G --dim 128
run "fwd main" "$M" "$V"/flashtile_bench $G --dim 128
run "bwd main 2" "$M" "$V"/flashtile_bench $G --backward --dim 128
run "bwd new 2" "$V" "$V"/flashtile_bench $G --backward --dim 128
step "summary"
python3 - "$OUT/vk.csv" <<'PY'
import csv, sys
tag = ""
for line in open(sys.argv[1]):
    if line.startswith("# "): tag = line[2:].strip(); continue
    if line.startswith("device,"): continue
    r = next(csv.reader([line]))
    if r[18] != "ok": print(tag, r[2], r[3], r[18], r[19]); continue
    print(f"{tag:11s} {r[2]:16s} d{r[10]:>3s} S{r[6]:>6s} causal {r[11]} {float(r[12]):9.3f} ms {float(r[14]):7.1f} TFLOP/s  {r[3]}")
PY
grep -E "^## |pipeline stats attn_bwd_(dkdv|dq)" "$OUT/vk_out.log" | cut -c1-600
grep -i -E "spill|error|nan" "$OUT/vk_out.log" | head -10
