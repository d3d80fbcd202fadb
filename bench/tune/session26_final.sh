#!/usr/bin/env bash
# Session 26's last call (~400 s; carry .bundle .bundle-tr .gl). .bundle: main at c1e374d (d128 causal's short kernel
# persistent to 8k; call 2 ran the library's checks on it); .bundle-tr/sm90_check_notrace: session 25's kernels
# (6373415; call 1's build from wip/s25-trace without -DFT_SM90_TRACE).
# Issue 4's table: the whole grid three times, old and land interleaved, then the peers.
# Files: main.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
mkdir -p /tmp/land && cp .bundle-tr/sm90_check_notrace /tmp/land/sm90_check_old && cp "$FT_BUNDLE"/sm90_check /tmp/land/sm90_check_land
ab3 /tmp/land old land
step done
