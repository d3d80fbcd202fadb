#!/usr/bin/env bash
# Builds sm90_check variants for tuning runs on the device: each NAME=FLAGS argument links OUTDIR/sm90_check_NAME from
# the sm90 kernel sources compiled with FLAGS (the FT_SM90_* macros of backends/cuda/attn/sm90_traits.hpp).
# Usage (repo root): bench/tools/build_variants.sh OUTDIR 'base=' 's2=-DFT_SM90_SCHEDULE=2' \
#   'chain=-DFT_SM90_CFG64="3:128:4:1:2" -DFT_SM90_CFG128="2:128:2:1:2"' ...
# Objects go to OUTDIR/obj; two compiles at a time (the dev machine has 2 cores).
# DIMS="64" (default "64 128 256"): flags that touch only those head dims' kernels. The other head dims link objects
# compiled once without flags (OUTDIR/obj/base_dD.o), so a d64 variant builds in about half a minute, not four.
set -euo pipefail
out=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
dims=${DIMS:-64 128 256}
mkdir -p "$out/obj"
nv=(nvcc -I"$root/backends/cuda" -I"$root/include" -O3 -DNDEBUG --generate-code=arch=compute_90a,code=sm_90a
    --expt-relaxed-constexpr -Xptxas=-warn-spills -std=c++20)
"${nv[@]}" -c "$root/tests/cuda/sm90_check.cu" -o "$out/obj/check.o"
for d in 64 128 256; do
  case " $dims " in *" $d "*) ;; *)
    [ -f "$out/obj/base_d$d.o" ] || "${nv[@]}" -c "$root/backends/cuda/attn/sm90_fwd_d$d.cu" -o "$out/obj/base_d$d.o" ;;
  esac
done
for v in "$@"; do
  name=${v%%=*}; flags=${v#*=}
  # The launch layer too: the kernel names it reports (sm90_fwd_name) follow the flags.
  # shellcheck disable=SC2086
  "${nv[@]}" $flags -c "$root/backends/cuda/attn/sm90_launch.cu" -o "$out/obj/${name}_launch.o" &
  objs=("$out/obj/${name}_launch.o")
  n=1
  for d in 64 128 256; do
    case " $dims " in *" $d "*) ;; *) objs+=("$out/obj/base_d$d.o"); continue ;; esac
    # shellcheck disable=SC2086
    "${nv[@]}" $flags -c "$root/backends/cuda/attn/sm90_fwd_d$d.cu" -o "$out/obj/${name}_d$d.o" &
    objs+=("$out/obj/${name}_d$d.o")
    n=$((n + 1))
    if [ "$n" -ge 2 ]; then wait; n=0; fi
  done
  wait
  nvcc -o "$out/sm90_check_$name" "$out/obj/check.o" "${objs[@]}"
  echo "built $out/sm90_check_$name ($flags)"
done
