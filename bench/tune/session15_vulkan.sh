#!/usr/bin/env bash
# Session 15, call 6 (~380 s; carry .bundle and .gl; nothing to build): issue 5's done-when on the H200 with main's
# library: the conformance suite on every Vulkan path (the "logits far below zero" and spiky-keys cases had run on
# lavapipe only), both examples (the interop one records flashtile into the application's own command buffer), and
# issue 5's table (every Vulkan path and cuda_sm90, cuDNN f16 on the same cells).
# run(carry=[".bundle", ".gl"], timeout_s=560, command='bash bench/tune/session15_vulkan.sh')
# Files: main.log checks.log conformance.log vk.csv vk_out.log clocks.log peers_f16.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
FT_CONF_TIMEOUT=220 conformance vulkan
step "examples"
ck "$FT_BUNDLE"/example_basic
ck "$FT_BUNDLE"/example_vulkan_interop
grep -E "^==|^exit" "$OUT/checks.log"
issue5_table 520
step done
