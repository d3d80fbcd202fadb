#!/usr/bin/env bash
# Builds session 20 call 3 (bench/tune/session20_call3.sh) from this working tree (~4 min on 2 cores; needs a
# configured build/): .bundle (the library, clusters for d128 non-causal) and .bundle-s20b/sm90_check_{nocl,cl,cl256}.
set -euo pipefail
rm -rf .bundle-s20b
bash tests/cuda/build_variants.sh .bundle-s20b 'nocl=-DFT_SM90_CLUSTER=0' 'cl=' 'cl256=-DFT_SM90_CLUSTER=128'
rm -rf .bundle-s20b/obj
cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
