#!/usr/bin/env bash
# Session 25's first call (~150 s; build: cmake --build build -j2 && bash bench/make_bundle.sh build .bundle on main;
# carry .bundle .gl). sm90_check's ten cases added after session 24's last device call (spikes, a jump past 2^128 and
# three steps through d64's small kernel, 1000 keys) have never run: the library's checks first, before any timing.
# Files: main.log checks.log conformance.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
library_checks
step done
