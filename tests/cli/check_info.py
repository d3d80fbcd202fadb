"""`flashtile info --json` parses, lists each device's paths as a JSON array, and a forced path a device lacks is
refused (exit 2) with a message listing exactly that device's paths. Usage: check_info.py path/to/flashtile"""

import json
import subprocess
import sys

ALL_PATHS = ["cpu_reference", "cuda_sm80", "cuda_sm90", "vulkan_portable", "vulkan_coopmat", "vulkan_coopmat2"]

cli = sys.argv[1]
info = json.loads(subprocess.run([cli, "info", "--json"], check=True, capture_output=True, text=True).stdout)
assert info["version"], info
assert isinstance(info["devices"], list) and info["devices"], info
for dev in info["devices"]:
    paths = dev["paths"]
    assert isinstance(paths, list) and paths and all(p in ALL_PATHS for p in paths), dev
    for other in (p for p in ALL_PATHS if p not in paths):
        run = subprocess.run([cli, "run", "--backend", dev["backend"], "--device", str(dev["index"]), "--path", other,
                              "--seq", "8", "--dim", "64", "--iters", "1", "--warmup", "0"],
                             capture_output=True, text=True)
        want = "options.path: %s is not a path of device" % other
        listed = "(its paths: %s)" % ", ".join(paths)
        assert run.returncode == 2 and want in run.stderr and listed in run.stderr, (other, run.returncode, run.stderr)
    print("%s:%d %s: paths %s; forcing any other path names exactly these" % (dev["backend"], dev["index"],
                                                                              dev["name"], paths))
print("info --json OK")
