#!/usr/bin/env bash
# A session-14 probe (~90 s; main's .bundle, nothing to build): is sm90 power-capped in its longest cells? d128
# non-causal 16k runs 615-634 TFLOP/s against a bar of 650 (session 13), and call 3 of session 13 saw the SM clock at
# 1395-1860 MHz at 570-680 W during Vulkan's first cells. Samples the SM clock, power and the clock-event reasons
# every 50 ms while sm90_check times three long cells 15 times each. If the clock drops under the power cap, fewer
# instructions (not fewer stalls) are what would pay there.
# run(carry=[".bundle", ".gl"], timeout_s=200, command='bash bench/tune/session14_sm90_power.sh')
# Files: main.log clocks.log cells.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
q=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown
nvidia-smi --query-gpu=$q --format=csv -c 1 > /dev/null 2>&1 || q=${q//clocks_event_reasons/clocks_throttle_reasons}
nvidia-smi --query-gpu=$q --format=csv -c 1
nvidia-smi --query-gpu=$q --format=csv,noheader -lms 50 >> "$OUT/clocks.log" 2>&1 &
clk=$!
for cell in 128,16384,0 256,16384,0 64,16384,0; do
  step "cell $cell"
  mark "start $cell"
  for i in $(seq 15); do timeout 30 "$FT_BUNDLE"/sm90_check --bench-only --cell $cell; done >> "$OUT/cells.log" 2>&1
  mark "end $cell"
  grep -c TFLOP "$OUT/cells.log"
done
kill "$clk" 2>/dev/null
grep -i "tflop" "$OUT/cells.log" | awk '{print $2, $3, $8, $9}' | sort | uniq -c | head -20
step done
