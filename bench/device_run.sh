#!/usr/bin/env bash
# The one command for the device machine (bench/README.md): unpack the Vulkan loader if carried, run the tests,
# flashtile_bench and bench/peers.py, and leave at most 8 files under $OUT:
#   run.log (everything), tests.log, cuda_checks.log, bench.csv, bench.json, peers.csv, peers.json, peers.png
# Usage, from the repository root there:  bash bench/device_run.sh [--quick] [BUNDLE_DIR]
#   BUNDLE_DIR: the carried folder holding libflashtile.so and the executables (default .bundle, else build).
#   --quick: reduced grid (bench --quick, peers --quick) for smoke tests.
# Environment: FT_SKIP_TESTS=1, FT_SKIP_BENCH=1, FT_SKIP_PEERS=1, FT_SKIP_PYTHON=1 skip a step; FT_BENCH_ARGS / FT_PEERS_ARGS add
# arguments; FT_TEST_TIMEOUT / FT_BENCH_TIMEOUT / FT_PEERS_TIMEOUT bound each step in seconds.
set -u
quick=0
bundle=""
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    *) bundle=$a ;;
  esac
done
if [ -z "$bundle" ]; then
  if [ -d .bundle ]; then bundle=.bundle; else bundle=build; fi
fi
OUT=${OUT:-/tmp/flashtile_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
export PYTHONUNBUFFERED=1
start=$(date +%s)
failures=()
step() { echo; echo "==== $* ($(( $(date +%s) - start )) s)"; }

step "environment"
date -u +%Y-%m-%dT%H:%M:%SZ
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv 2>&1 || true
git log -1 --format='commit %H %s' 2>/dev/null || echo "commit: (no git metadata here)"
git status --short 2>/dev/null | head -20

# Vulkan loader, carried as .gl/*.deb (the device has none): unpack into / as the device README says.
if ls .gl/*.deb >/dev/null 2>&1; then
  step "unpacking the Vulkan loader from .gl"
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi

# The carried library: executables built here have RUNPATHs into this machine's build folder, so point the loader
# and the Python binding at the bundle instead.
lib=$(find "$bundle" -maxdepth 3 -name 'libflashtile.so' 2>/dev/null | head -n1)
if [ -z "$lib" ]; then
  lib=$(find "$bundle" -maxdepth 3 -name 'libflashtile.so*' 2>/dev/null | head -n1)
fi
if [ -n "$lib" ]; then
  libdir=$(cd "$(dirname "$lib")" && pwd)
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export FLASHTILE_LIBRARY="$libdir/$(basename "$lib")"
  echo "library: $FLASHTILE_LIBRARY"
else
  echo "no libflashtile.so under '$bundle': flashtile steps will be skipped; peers only"
fi
exe() { find "$bundle" -maxdepth 3 -type f -name "$1" -perm -u+x 2>/dev/null | head -n1; }
cli=$(exe flashtile)
[ -n "$cli" ] && { step "devices (flashtile info)"; "$cli" info 2>&1 || true; }

if [ "${FT_SKIP_TESTS:-0}" != 1 ]; then
  step "tests (log: tests.log)"
  {
    t=$(exe flashtile_tests)
    if [ -n "$t" ]; then
      # As ctest runs them (tests/CMakeLists.txt): the core suites on the CPU, then conformance per GPU backend;
      # exit code 77 means no device of that backend (skipped, with the reason printed).
      for suite in "--ft-backend=cpu -tce=conformance*" "--ft-backend=cuda -tc=conformance*" \
                   "--ft-backend=vulkan -tc=conformance*"; do
        echo "== $t $suite"
        # shellcheck disable=SC2086
        timeout "${FT_TEST_TIMEOUT:-240}" "$t" $suite
        rc=$?
        if [ $rc = 77 ]; then echo "SKIPPED (no device): $suite"; elif [ $rc != 0 ]; then echo "FAILED: flashtile_tests $suite rc=$rc"; fi
      done
    fi
    t=$(exe flashtile_c_api_test)
    if [ -n "$t" ]; then
      echo "== $t"; timeout 120 "$t" || echo "FAILED: flashtile_c_api_test rc=$?"
    fi
    if [ -n "$lib" ] && [ "${FT_SKIP_PYTHON:-0}" != 1 ]; then
      echo "== python binding tests (torch CUDA tests included here)"
      timeout 300 python3 -m unittest discover -s tests/python -p 'test_*.py' -v || echo "FAILED: python tests rc=$?"
    fi
  } > "$OUT/tests.log" 2>&1
  grep -E "FAILED|SKIPPED|^OK|^Ran |checks passed|test cases|Status" "$OUT/tests.log" || true
  grep -q "FAILED" "$OUT/tests.log" && failures+=(tests)
fi

extra_shapes=(--shape 1,16384,16384,32,8,128 --shape 1,16384,16384,32,8,128,causal --shape 1,32768,32768,16,16,128,causal)
if [ "${FT_SKIP_BENCH:-0}" != 1 ] && [ -n "$(exe flashtile_bench)" ]; then
  step "flashtile_bench"
  args=(--csv "$OUT/bench.csv" --json "$OUT/bench.json")
  if [ $quick = 1 ]; then args+=(--quick --dtype bf16 --iters 10); else args+=("${extra_shapes[@]}"); fi
  # shellcheck disable=SC2086
  timeout "${FT_BENCH_TIMEOUT:-300}" "$(exe flashtile_bench)" "${args[@]}" ${FT_BENCH_ARGS:-} || failures+=(bench)
fi

if [ "${FT_SKIP_PEERS:-0}" != 1 ]; then
  step "peers.py"
  args=(--out "$OUT" --merge-bench "$OUT/bench.csv")
  if [ $quick = 1 ]; then args+=(--quick --rep 50); else args+=("${extra_shapes[@]}"); fi
  [ -z "$lib" ] && args+=(--no-flashtile)
  # shellcheck disable=SC2086
  timeout "${FT_PEERS_TIMEOUT:-400}" python3 bench/peers.py "${args[@]}" ${FT_PEERS_ARGS:-} || failures+=(peers)
fi

# CUDA-only checks: tile unit tests, the standalone kernel checkers, compute-sanitizer memcheck and racecheck on
# small cases (odd sizes included), and the HGMMA count of the library's SASS.
if [ "${FT_SKIP_CUDA_CHECKS:-0}" != 1 ] && [ -n "$(exe tile_tests)$(exe sm90_check)$(exe cuda_sm80_check)" ]; then
  step "CUDA checks (log: cuda_checks.log)"
  {
    for c in "tile_tests" "sm90_check --no-bench" "cuda_sm80_check --quick --no-time"; do
      set -- $c
      t=$(exe "$1"); shift
      [ -n "$t" ] || continue
      echo "== $c"; timeout 120 "$t" "$@" | grep -v "^ok " | tail -20
      rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || echo "FAILED: $c rc=$rc"
    done
    for tool in memcheck racecheck; do
      for c in "sm90_check --quick --no-bench" "cuda_sm80_check --small"; do
        set -- $c
        t=$(exe "$1"); shift
        [ -n "$t" ] || continue
        echo "== compute-sanitizer --tool $tool $c"
        timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 "$t" "$@" | grep -v "^ok " | tail -8
        rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || echo "FAILED: $tool $c rc=$rc"
      done
    done
    [ -n "$lib" ] && echo "HGMMA instructions in libflashtile.so: $(cuobjdump --dump-sass "$FLASHTILE_LIBRARY" 2>/dev/null | grep -c HGMMA)"
  } > "$OUT/cuda_checks.log" 2>&1
  grep -E "FAILED|== |ERROR SUMMARY|HGMMA|passed|failed" "$OUT/cuda_checks.log" | head -40
  grep -q "FAILED" "$OUT/cuda_checks.log" && failures+=(cuda_checks)
fi

step "done"
ls -la "$OUT"
if [ ${#failures[@]} -gt 0 ]; then
  echo "device_run: failed steps: ${failures[*]}"
  exit 1
fi
echo "device_run: all steps passed"
