#!/usr/bin/env bash
# Session 6, device call 5 (carry: build-var16; ~200 s). Where the ~3.8 us per tile of persistent launches goes:
# ablations that give wrong results but time the kernel without a part (bench/tune/session6_ablation.patch):
# noq (Q loaded for a CTA's first tile only; the handshake stays), noepi (no O / LSE stores), none (both), against
# head, the whole grid twice interleaved, then peers. Files: main.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
B=build-var16
. "$(dirname "$0")/device_env.sh"
ab $B head noq noepi none
FT_PEERS_TIMEOUT=120 peers_grid
step done
