#!/usr/bin/env bash
# The simulated ring on one H200 (issue 46): the ring tests, `flashtile run --ring 4` forward and backward with both
# shardings against the CPU reference, and compute-sanitizer memcheck on a small zigzag case; bench/device_run_ring.sh's
# one-GPU steps, bounded for the time left. Bundle .bundle_r (make_bundle.sh, xz'd): libflashtile, flashtile,
# flashtile_tests.
python3 bench/tools/unxz_bundle.py .bundle_r && export LD_LIBRARY_PATH=$PWD/.bundle_r && nvidia-smi -L; set -o pipefail; { timeout 120 .bundle_r/flashtile_tests --ft-backend=cuda -tc='ring*'; echo "ring tests exit $?"; for z in "" --zigzag; do timeout 60 .bundle_r/flashtile run --backend cuda --ring 4 $z --backward --check --seq 4096 --heads 16 --heads-kv 4 --dim 128 --dtype bf16; echo "run --ring 4 $z exit $?"; done; timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 .bundle_r/flashtile run --backend cuda --ring 3 --zigzag --backward --check --seq 384 --heads 4 --heads-kv 2 --dim 64 --dtype f16; echo "memcheck exit $?"; } 2>&1 | tee $OUT/ring.log
