#!/usr/bin/env bash
# (Ran at a021e1c, session 25 call 1; FT_SM90_PERS64C and FT_SM90_SHORT64C were removed after it: build that commit.)
# Session 25's first call (~300 s; build: bash bench/tune/session25_build.sh on main; carry .bundle .bundle-s25 .gl).
# sm90_check's ten cases added after session 24's last device call (spikes, a jump past 2^128 and three steps
# through d64's small kernel, 1000 keys) have never run: the library's checks first. Then d64's grid three times
# interleaved: land against d64 causal persistent to 16k (pers64c) and its short kernel to 16k (short64c).
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
library_checks
smoke_some .bundle-s25 pers64c short64c
vary .bundle-s25 3 --grid-d 64
step done
