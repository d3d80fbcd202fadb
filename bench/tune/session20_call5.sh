#!/usr/bin/env bash
# Session 20 call 5 (~250 s; build: bench/tune/session20_build3.sh; carry .bundle .bundle-s20b .gl): call 3's script
# (bench/tune/session20_call3.sh) on the next build: d256 non-causal's main kernel decides at launch (Sm90Params::cluster)
# and clusters past 4096 keys, like d128's (built for clusters alone). cl and cl256 are now the same kernels (a noise
# reference); nocl has no clusters. New sm90_check cases: d256 non-causal clustered (1, 2, 3 m-blocks).
exec bash "$(dirname "$0")/session20_call3.sh"
