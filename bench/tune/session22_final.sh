#!/usr/bin/env bash
# Session 22's fifth call (carry .bundle .bundle-main .gl): call 4 (bench/tune/session22_land.sh) again on main as
# landed, which adds the cached cluster occupancy (sm90_run asks once per device and instantiation) to lazy rescaling
# mode 2 in every head dim. Same steps and files.
exec bash "$(dirname "$0")/session22_land.sh"
