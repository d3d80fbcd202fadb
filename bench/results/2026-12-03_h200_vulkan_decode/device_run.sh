#!/usr/bin/env bash
set -u
FT_BUNDLE=.bundle_vkdec . bench/tools/device_lib.sh
V=.bundle_vkdec
step "vk/decode: conformance decode + serving (every Vulkan path)"
timeout 110 $V/flashtile_tests --ft-backend=vulkan -tc='conformance: decode*,conformance serving*' > "$OUT/vkdec_conf.log" 2>&1; echo "exit $?"
grep -E "test cases|assertions|Status|ERROR|FAILED" "$OUT/vkdec_conf.log" | head -12
export FT_VK_TIMEOUT=70 FT_VK_DEADLINE=300
step "vk/decode: speed"
vk "decode" $V/flashtile_bench --backend vulkan --no-grid --dtype f16 --warmup-ms 1000 --shape 1,1,65536,32,8,128,0 --shape 16,1,8192,32,8,128,0 --shape 64,1,4096,32,8,128,0 --shape 128,1,2048,32,8,128,0 --shape 8,16,32768,32,8,128,1
grep -E "^# |vulkan" "$OUT/vk.csv" | cut -c1-200 | head -30
step "cuda/var-speed2: sm90_check --no-bench, then one --variants round of main and the branch"
H=.bundle_var2
tar -xJf $H/bin.txz -C $H 2>/dev/null || python3 -c "import lzma, tarfile, sys; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])" $H/bin.txz $H
export LD_LIBRARY_PATH=$PWD/$H/branch
timeout 90 $H/branch/sm90_check --no-bench > "$OUT/var2_check.log" 2>&1; echo "exit $?"
grep -E "^FAIL|correctness" "$OUT/var2_check.log" | head -10
for b in main branch; do timeout 60 $H/$b/sm90_check --variants > "$OUT/var2_bench_$b.log" 2>&1; echo "$b exit $?"; done
grep -h "bench" "$OUT"/var2_bench_*.log | cut -c1-150 | head -40
