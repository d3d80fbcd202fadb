#!/usr/bin/env bash
# Rebuilds build-old/sm90_check_6ec0cab for bench/tune/session5_call3.sh / call4: the first session's run-2 kernel
# (commit 6ec0cab, one CTA per tile) with today's timing (100 ms warm-up, median of 7 batches of 10 launches, from
# e2d4719's harness) spliced into its sm90_check, so both kernels are timed the same way. Run from the repo root.
set -euo pipefail
wt=/tmp/wt6ec
rm -rf "$wt"; git worktree add -f "$wt" 6ec0cab >/dev/null
python3 - "$wt" <<'PY'
import subprocess, sys
wt = sys.argv[1]
new = subprocess.check_output(['git', 'show', 'e2d4719:tests/cuda/sm90_check.cu']).decode()
path = wt + '/tests/cuda/sm90_check.cu'
old = open(path).read()
a = old.index('  for (int i = 0; i < 3; ++i) flashtile::cuda::sm90_fwd_launch(p);')
b = old.index('  std::sort(ms.begin(), ms.end());')
na = new.index('  cudaEvent_t e0, e1;', new.index('void bench('))
nb = new.index('  std::sort(ms.begin(), ms.end());', na)
open(path, 'w').write(old[:a] + new[na:nb] + old[b:])
PY
cmake -S "$wt/tests/cuda" -B "$wt/build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$wt/build" -j2 --target sm90_check >/dev/null
mkdir -p build-old && cp "$wt/build/sm90_check" build-old/sm90_check_6ec0cab
git worktree remove --force "$wt"
echo "built build-old/sm90_check_6ec0cab"
