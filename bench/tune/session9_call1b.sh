#!/usr/bin/env bash
# Session 9, first device call: session9_call1.sh (d64 tile shapes, ~150 s) and then the row-group portable shader
# from branch wip/vk-portable at 7aea929 (session8_call5.sh on .bundle-rg, ~200 s), in one call to save a start.
# run(carry=[".bundle", ".bundle-rg", ".gl", "build-var22"], timeout_s=560, command='bash bench/tune/session9_call1b.sh')
# Files: main.log checks.log grid.log vk.csv vk_out.log conformance.log.
d=$(dirname "$0")
bash "$d/session9_call1.sh"
FT_BUNDLE=.bundle-rg bash "$d/session8_call5.sh"
