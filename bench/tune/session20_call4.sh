#!/usr/bin/env bash
# Session 20 call 4 (~250 s; build: bench/tune/session20_build3.sh; carry .bundle .bundle-s20b .gl): call 3 again
# (bench/tune/session20_call3.sh), with cl's SASS. Call 3 measured clusters at d128 non-causal 8k/16k -11%, d256
# -20..24%, with the peer's releases as mbarrier.arrive.release.cluster; this build has them with the default
# semantics (CUTLASS's form).
FT_SASS=1 exec bash "$(dirname "$0")/session20_call3.sh"
