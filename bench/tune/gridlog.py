"""What ab_grid.py and grid_modes.py read from a tuning call's grid.log: the run each `== DIR/sm90_check_NAME ...`
heading starts, and sm90_check's bench lines."""
import re

# sm90_check's bench line: mode (persist / pertile / ...), d, S, causality, TFLOP/s; `dispatched` at its end marks the
# launch the library would pick.
BENCH = re.compile(r"bench sm90_fwd_(\w+) d=(\d+) bf16 B=\d+ H=\d+ S=(\d+) (\S+)\s+median [\d.]+ ms\s+([\d.]+) TFLOP")


def run_name(heading):
    """NAME of `== DIR/sm90_check_NAME ARGS`; run-time launch overrides make a run of their own (pd --head-group 8 is
    pd@head-group8)."""
    words = heading.split()
    name = words[1].rsplit("_", 1)[-1]
    for flag, value in zip(words[2:], words[3:]):
        if flag in ("--head-group", "--ctas", "--m-major"):
            name += f"@{flag[2:]}{value}"
    return name
