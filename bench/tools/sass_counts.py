#!/usr/bin/env python3
"""Per-kernel opcode counts of the sm90 kernels in `cuobjdump -sass BINARY | gzip` dumps (the device has cuobjdump, this
machine does not), side by side for several dumps: static counts, so they say what a change did to the code (e.g.
R2UR moves into uniform registers before wgmmas, STL/LDL spills), not how often it runs (ncu_opcodes.py does that).
Usage: sass_counts.py NAME=sass_NAME.txt.gz ... [--ops R2UR,IMAD,...] (bf16 kernels)"""
import collections
import gzip
import re
import sys

ops = "R2UR,IMAD,VIADD,UIADD3,SHF,LOP3,LEA,STL,LDL,HGMMA".split(",")
dumps = []
for a in sys.argv[1:]:
    if a.startswith("--ops="):
        ops = a[6:].split(",")
    else:
        name, path = a.split("=", 1)
        funcs, cur = {}, None
        for line in gzip.open(path, "rt"):
            m = re.match(r"\s*Function : (\S+)", line)
            if m:
                cur = funcs.setdefault(m.group(1), collections.Counter())
                continue
            m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
            if m and cur is not None:
                cur[m.group(2)] += 1
        dumps.append((name, funcs))
names = [n for n, _ in dumps]
print("| kernel | " + " | ".join(["total"] + ops) + " |  (" + " / ".join(names) + ")")
print("|---" * (len(ops) + 2) + "|")
for f in sorted(dumps[0][1]):
    if "sm90_fwd_kernel" not in f or "13__nv_bfloat16" not in f:
        continue
    label = re.sub(r".*kernelILi(\d+)E13__nv_bfloat16Lb(\d)ELb(\d).*", r"d\1 causal=\2 short=\3", f)
    cols = ["/".join(str(sum(d.get(f, {}).values())) for _, d in dumps)]
    cols += ["/".join(str(d.get(f, collections.Counter())[o]) for _, d in dumps) for o in ops]
    print(f"| {label} | " + " | ".join(cols) + " |")
