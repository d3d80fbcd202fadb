#!/usr/bin/env bash
# Session 23 call 6 (~200 s; carry .bundle .bundle-s23 .gl). The landing candidate (kLazy 3 everywhere, repair after
# the P·V) with new tests: sm90_check's "step" cases (q = 1, k = 0 but one key whose logit is 40, 100 or 127 above
# the others in the exp2 domain, in the block visited last) and jump cases past 4096 keys (the clustered main kernel);
# the conformance case "a running max that steps up by 2^40, 2^100, 2^127". And a mutation: sm90_check_mut is the
# same kernels with call 1's threshold (P rescaled up to any finite sum): its step-127 cases must fail.
# Files: main.log checks.log conformance.log mut.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
library_checks
step "mutation"
timeout 150 .bundle-s23/sm90_check_mut --no-bench > "$OUT/mut.log" 2>&1; echo "mut exit $?"
grep -E "^FAIL|passed" "$OUT/mut.log" | tail -20
step done
