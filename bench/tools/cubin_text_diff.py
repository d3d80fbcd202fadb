#!/usr/bin/env python3
"""Compares the machine code of two cubins, kernel by kernel: the .text.<kernel> sections (SASS bytes), plus each
kernel's parameter bank (.nv.constant0.*) and attributes (.nv.info.*), which change with the params struct only.
The dev machine has no cuobjdump/nvdisasm; this tells whether a refactor changed the code that runs.
Usage: nvcc ... -cubin -o a.cubin (before) / b.cubin (after); bench/tools/cubin_text_diff.py a.cubin b.cubin
Exit status 1 when any .text section differs or is missing on one side."""
import struct
import sys


def sections(path):
    d = open(path, "rb").read()
    shoff = struct.unpack_from("<Q", d, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        name = d[names + h[0]:d.index(b"\0", names + h[0])].decode()
        out[name] = b"" if h[1] == 8 else d[h[4]:h[4] + h[5]]  # SHT_NOBITS holds no bytes
    return out


a, b = sections(sys.argv[1]), sections(sys.argv[2])
text_differs = False
for n in sorted(set(a) | set(b)):
    if not n.startswith((".text.", ".nv.constant0.", ".nv.info.")):
        continue
    x, y = a.get(n), b.get(n)
    state = "same" if x == y else "missing" if x is None or y is None else f"differs ({len(x)} vs {len(y)} bytes)"
    text_differs |= n.startswith(".text.") and state != "same"
    print(f"{state:28s} {n}")
sys.exit(1 if text_differs else 0)
