#!/usr/bin/env bash
# Both planned first calls of session 5 in one device call (one cold start instead of two): next_call_cuda.sh
# (~250 s) then next_call.sh (~150 s). Carry .bundle .gl build-var8 (built as next_call_cuda.sh's header says);
# run(..., timeout_s=560). Files: main.log checks.log grid.log (CUDA), run.log vk.csv vk_out.log clocks.log (Vulkan).
set -u
bash "$(dirname "$0")/next_call_cuda.sh"
bash "$(dirname "$0")/next_call.sh"
