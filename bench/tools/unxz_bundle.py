#!/usr/bin/env python3
"""Unpacks every *.xz under a carried bundle folder in place (executable), so a bundle can travel xz-compressed under
the device tool's size limit (bench/make_bundle.sh's binaries, strip + xz). Usage: unxz_bundle.py DIR"""
import lzma
import os
import pathlib
import shutil
import sys

for x in pathlib.Path(sys.argv[1]).rglob("*.xz"):
    with lzma.open(x) as f, open(x.with_suffix(""), "wb") as g:
        shutil.copyfileobj(f, g)
    os.chmod(x.with_suffix(""), 0o755)
    x.unlink()
