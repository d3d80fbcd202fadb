#!/usr/bin/env bash
# Session 5, device call 1 (bench/results/2026-11-30_h200_session5/call1): both planned first calls in one device
# call (one cold start instead of two), after the library's
# conformance suite on both backends (session 4's final kernels and prepare_attention have not run on the H200):
# conformance (~70 s), next_call_cuda.sh (~250 s), next_call.sh (~150 s). Carry .bundle .gl build-var8 (built as
# next_call_cuda.sh's header says); run(..., timeout_s=590). Files: conformance.log, main.log checks.log grid.log
# (CUDA), run.log vk.csv vk_out.log clocks.log (Vulkan).
set -u
(
  FT_LOG=main.log
  . "$(dirname "$0")/device_env.sh"
  conformance cuda vulkan
)
bash "$(dirname "$0")/next_call_cuda.sh"
bash "$(dirname "$0")/next_call.sh"
