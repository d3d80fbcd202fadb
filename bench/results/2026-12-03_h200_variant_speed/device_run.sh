#!/usr/bin/env bash
# The device call that measured this folder (bash .bundle/run.sh on nvidia-h200; .bundle: the stripped library and
# the test/bench executables of main after merging cuda/var-speed, CMAKE_CUDA_ARCHITECTURES=90a).
set -u
B=.bundle
export LD_LIBRARY_PATH=$PWD/$B FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so
T=$B/flashtile_tests
$B/tile_tests                       # the new tanh against std::tanh on the GPU
$B/sm90_check --no-bench
$B/sm90_bwd_check
$B/cuda_sm80_check --no-time
$T --ft-backend=cuda -tc='conformance variants*'
$B/sm90_check --variants            # sm90_check_variants.txt
for v in '' '--softcap 50' '--alibi'; do   # bench_sm80_variants.txt
  $B/flashtile_bench --backend cuda --path cuda_sm80 --no-grid --dtype bf16 --shape 1,16384,16384,16,16,128 $v --iters 10
done
