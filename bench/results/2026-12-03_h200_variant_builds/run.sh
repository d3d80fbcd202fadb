#!/usr/bin/env bash
# Branch cuda/var-speed2 on the H200 (not committed): issue 43's timing (sm90_check --variants --bench-only) of main's and the
# branch's sm90_check interleaved with A/B builds of the softcap share, in rounds: one round, the checks of the
# branch's binaries, then more rounds while time is left (STOP_S, CHECK_S below).
# Run from the repository root with .h200 carried: bash .h200/run.sh. Logs go to $OUT (at most 8 files):
#   checks.txt  sm90_check --no-bench, sm90_bwd_check, tile_tests, flashtile_tests conformance variants (branch)
#   bench_main.txt / bench_branch.txt / bench_p0.txt / bench_p8.txt  the --variants rounds of each binary
#   ratios.txt  variant / plain per binary and round, from the bench lines;  sass.txt  MUFU / FFMA counts per score
#   (where cuobjdump exists);  time.txt  what ran when.
# Binaries (stripped, in .h200/bin.txz): branch/ (sm90_check, sm90_bwd_check, tile_tests, flashtile_tests,
# libflashtile.so.0), main/sm90_check (/work/main/build's, linked 16:13 UTC at main 2d9e3a7 or before: main's forward);
# ab/sm90_check_p0 (and _p8): the branch with kSm90SoftcapPolyEvery 0 (8) in its d128 kernels, where
# the branch has 12.
set -u
H=.h200
OUT=${OUT:-/tmp/h200_out}
mkdir -p "$OUT"
T0=$(date +%s)
log() { echo "$(( $(date +%s) - T0 ))s $*" >> "$OUT/time.txt"; }
# bin.txz: xz, or Python's lzma where there is no xz.
tar -xJf $H/bin.txz -C $H 2> /dev/null ||
  python3 -c "import lzma, tarfile, sys; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])" \
    $H/bin.txz $H || { echo "bin.txz: not unpacked" >> "$OUT/time.txt"; exit 1; }
B=$H/branch
export LD_LIBRARY_PATH=$PWD/$B FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv >> "$OUT/time.txt" 2>&1

# Time left: the run's limit is 600 s; no round starts past STOP_S, each check stops at CHECK_S.
STOP_S=${STOP_S:-480} CHECK_S=${CHECK_S:-240}
bins=("main:$H/main/sm90_check" "branch:$B/sm90_check")
[ -x $H/ab/sm90_check_p0 ] && bins+=("p0:$H/ab/sm90_check_p0")
[ -x $H/ab/sm90_check_p8 ] && bins+=("p8:$H/ab/sm90_check_p8")
round() {  # one --variants run of each binary, in turn
  for nb in "${bins[@]}"; do
    [ $(( $(date +%s) - T0 )) -gt $STOP_S ] && return 1
    local n=${nb%%:*} b=${nb#*:}
    log "round $1 $n"
    { echo "=== round $1"; timeout 150 $b --variants --bench-only 2>&1; } >> "$OUT/bench_$n.txt"
  done
  return 0
}
check() {  # the command's failures, last lines and exit code
  echo "=== $*"
  timeout $CHECK_S "$@" > "$OUT/last.log" 2>&1
  local rc=$?
  grep -E "FAIL|ERROR| [1-9][0-9]* failed" "$OUT/last.log" | head -20
  tail -15 "$OUT/last.log"
  echo "=== rc=$rc"
}

# 1. A first timing round (main, branch, the A/B builds), then the branch's checks, then more rounds while time is
# left.
round 1
{
  log "checks"
  check $B/sm90_check --no-bench
  check $B/sm90_bwd_check
  check $B/tile_tests
  check $B/flashtile_tests --ft-backend=cuda '-tc=conformance variants*'
  rm -f "$OUT/last.log"
} > "$OUT/checks.txt" 2>&1
log "checks done"
round 2 && round 3
log "timing done"

# 3. Ratios: each variant's median against the plain call of the same S and mask, per binary and round.
for f in "$OUT"/bench_*.txt; do
  awk -v name="$(basename "$f" .txt)" '
    /^=== round/ { round = $3 }
    /^bench sm90_fwd/ {
      for (i = 1; i <= NF; ++i) { if ($i ~ /^S=/) s = $i; if ($i == "median") ms = $(i + 1) }
      mask = ($0 ~ / causal /) ? "causal" : "non-causal"
      kname = $NF
      if ($2 == "sm90_fwd") { plain[s mask] = ms; printf "%s r%s %s %-10s plain %.3f ms %s\n", name, round, s, mask, ms, kname }
      else printf "%s r%s %s %-10s %-18s %.3f ms  %.3fx  %s\n", name, round, s, mask, $2, ms, plain[s mask] / ms, kname
    }' "$f"
done > "$OUT/ratios.txt"

# 4. MUFU and FMA-pipe counts of the d128 softcap kernels (Sm90Mods::softcap = 3) and the plain ones, where cuobjdump is.
if command -v cuobjdump > /dev/null; then
  for nb in "branch:$B/sm90_check" "p0:$H/ab/sm90_check_p0" "p8:$H/ab/sm90_check_p8"; do
    n=${nb%%:*} b=${nb#*:}
    [ -x "$b" ] || continue
    cuobjdump -sass "$b" | awk -v name="$n" '
      /Function :/ { f = $3 }
      f ~ /sm90_fwd_kernel.*Li128E/ && /^ +\/\*[0-9a-f]+\*\// {
        op = $2; if (op ~ /^@/) op = $3; sub(/\..*/, "", op); ++c[f, op]; ++tot[f]; fs[f] = 1 }
      END { for (f in fs) printf "%s %s: total %d MUFU %d FFMA %d FADD %d FMUL %d FMNMX %d F2FP %d IADD3 %d LEA %d FSEL %d\n",
              name, f, tot[f], c[f, "MUFU"], c[f, "FFMA"], c[f, "FADD"], c[f, "FMUL"], c[f, "FMNMX"], c[f, "F2FP"],
              c[f, "IADD3"], c[f, "LEA"], c[f, "FSEL"] }'
  done > "$OUT/sass.txt" 2>&1
else
  echo "no cuobjdump on this machine" > "$OUT/sass.txt"
fi
log "end"
