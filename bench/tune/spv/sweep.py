#!/usr/bin/env python3
"""Specialize every row-group module for each config of kRgConfigs and session8_call5.sh, run spirv-opt -O, and report
any array left indexed at run time (dynidx.py). usage: sweep.py [SPIRV_DIR=build-vk/backends/vulkan/spirv/]"""
import subprocess, itertools, sys, os
SPV = sys.argv[1] if len(sys.argv) > 1 else 'build-vk/backends/vulkan/spirv/'
base = {64: (64, 16, 128, 4, 0), 128: (64, 16, 256, 8, 0), 256: (32, 16, 256, 8, 0)}
strings = ["d64=64:16:128:4,d128=64:16:256:8,d256=32:16:256:8",
  "d64=32:16:128:4,d128=32:16:256:16,d256=16:16:128:16",
  "d64=64:32:128:4,d128=32:16:128:4,d256=32:16:256:16",
  "d64=64:16:128:4:1,d128=64:16:256:8:1,d256=32:16:256:8:1",
  "d64=64:16:64:4,d128=64:16:128:8,d256=32:16:128:8",
  "d64=128:32:256:4,d128=32:16:128:8,d256=64:16:256:8"]
cfgs = set((d,) + c for d, c in base.items())
for s in strings:
    for item in s.split(','):
        d, rest = item.split('=')
        v = [int(x) for x in rest.split(':')] + [0]
        cfgs.add((int(d[1:]),) + tuple(v[:5]))
def ok(d, bm, bn, wg, tpr, pf, unit):
    return (d // unit) % tpr == 0 and bn % tpr == 0 and wg % tpr == 0 and (bm * tpr) % wg == 0 and (bn * d // unit) % wg == 0
n = bad = 0
for (d, bm, bn, wg, tpr, pf) in sorted(cfgs):
    for mod, unit in [('rg_s16', 4), ('rg_pk', 4), ('rg_f32', 4), ('rgh_s16', 8), ('rgh_pk', 8)]:
        if not ok(d, bm, bn, wg, tpr, pf, unit): print('skip', mod, d, bm, bn, wg, tpr, pf); continue
        dt = 2 if mod.endswith('f32') else 0
        for causal in (0, 1):
            spec = f'0:{d} 1:{causal} 2:{dt} 3:{bm} 4:{bn} 5:{wg} 10:{tpr} 11:{pf}'
            r = subprocess.run(['python3', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'dynidx.py'), SPV + f'attn_portable_{mod}.spv'] +
                               ['--spec=' + x for x in spec.split()] + ['--opt'], capture_output=True, text=True)
            n += 1
            out = r.stdout + r.stderr
            if r.returncode or 'no dynamically' not in out or 'loops left: 1 (None)' not in out:
                bad += 1; print('LEFT', mod, spec, out.replace('\n', ' | '))
print(f'{n} specialized pipelines checked, {bad} with arrays or [[unroll]] loops left')
