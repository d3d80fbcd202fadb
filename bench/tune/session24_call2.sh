#!/usr/bin/env bash
# Session 24's call 2 (~300 s; build: tests/cuda/build_variants.sh .bundle-s24 with c4, c4cs, qpf, c4qpf as in
# DEVELOPERS.md; carry .bundle .bundle-s24 .gl). Call 1 rejected 64-key blocks with three consumers (0.88-0.91x)
# and rot3 (0.97/0.99x). Here: four consumers with 64-key blocks at d64 (c4: 4:64:6:1, 256-row tiles: 512 and 1k
# divide, no ragged tile; c4cs: its causal short kernel with staged O, so Q prefetch applies), Q prefetch in d64's
# non-causal short kernel (qpf), and both (c4qpf). Then d64 non-causal at 384/512/576/768 rows (land): a ragged
# last tile's cost. Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke_some .bundle-s24 c4 c4cs qpf c4qpf
vary .bundle-s24 3 --grid-d 64
step "ragged tiles"
for rep in 1 2; do for v in land c4; do for cell in 64,384,0,32,42 64,512,0 64,576,0,32,28 64,768,0,32,21; do
  g .bundle-s24/sm90_check_$v --bench-only --cell $cell
done; done; done
step done
