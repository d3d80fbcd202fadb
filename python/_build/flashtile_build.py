"""A PEP 517 build backend for the flashtile binding, standard library only: pip installs it offline.

The package is flashtile/*.py, pure Python (py3-none-any). Its version is the library's, read from
include/flashtile/version.hpp next to this folder (the one definition). The binding finds the shared library at run
time: FLASHTILE_LIBRARY, or libflashtile.so.0 through the dynamic loader (flashtile/__init__.py says the order).
"""

import base64
import hashlib
import os
import re
import zipfile

NAME = "flashtile"
_HERE = os.path.dirname(os.path.abspath(__file__))
_PYTHON = os.path.dirname(_HERE)
_VERSION_HPP = os.path.join(_PYTHON, "..", "include", "flashtile", "version.hpp")


def version():
    try:
        with open(_VERSION_HPP) as f:
            text = f.read()
    except OSError as e:
        raise RuntimeError("flashtile_build: needs the source tree's include/flashtile/version.hpp (%s)" % e)
    parts = [re.search(r"kVersion%s = (\d+)" % p, text) for p in ("Major", "Minor", "Patch")]
    if not all(parts):
        raise RuntimeError("flashtile_build: no kVersionMajor/Minor/Patch in " + _VERSION_HPP)
    return ".".join(m.group(1) for m in parts)


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: Exact attention (FlashAttention forward) on CUDA, "
            "Vulkan and the CPU: the ctypes binding of libflashtile\nRequires-Python: >=3.8\n" % (NAME, version()))


def _dist_info():
    return "%s-%s.dist-info" % (NAME, version())


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    path = os.path.join(metadata_directory, _dist_info())
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w") as f:
        f.write(_metadata())
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    pkg = os.path.join(_PYTHON, NAME)
    for name in sorted(os.listdir(pkg)):
        # _library.py records where `cmake --install` put the library: never part of a wheel.
        if name.endswith(".py") and name != "_library.py":
            with open(os.path.join(pkg, name), "rb") as f:
                files.append(("%s/%s" % (NAME, name), f.read()))
    info = _dist_info()
    files.append((info + "/METADATA", _metadata().encode()))
    files.append((info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: flashtile_build\nRoot-Is-Purelib: true\n"
                                   b"Tag: py3-none-any\n"))
    record = []
    for arc, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (arc, digest, len(data)))
    record.append(info + "/RECORD,,")
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = "%s-%s-py3-none-any.whl" % (NAME, version())
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return wheel
