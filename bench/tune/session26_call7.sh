#!/usr/bin/env bash
# Session 26's seventh call (~200 s; carry .bundle .bundle-h256 .gl). .bundle: main at c1e374d.
# .bundle-h256: tests/cuda/build_variants.sh .bundle-h256 'd256h=-DFT_SM90_LIMITS="256:1:8192:8192:1:512"'
# 'd256p=-DFT_SM90_LIMITS="256:1:4096:8192:1:512"': d256 causal at 8k through its short kernel persistent (as d128's
# landed in call 1), or through the main kernel persistent under the scheduler; main runs the main kernel one CTA per
# tile there (8k reads 635 TFLOP/s between 4k's 670 and 16k's 711 in call 6).
# The variants' checks, then d256's grid three times, land and the variants interleaved.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-h256 d256h d256p
vary .bundle-h256 3 --grid-d 256
step done
