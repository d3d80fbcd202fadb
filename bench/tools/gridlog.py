"""What ab_grid.py, grid_modes.py, grid_table.py and sm90_table.py read from a device run's grid.log: the run each
`== DIR/sm90_check_NAME ...` heading starts, sm90_check's bench lines, sm90_peer.py's lines; and the sm90 path's bars (issue 4)."""
import re

# sm90_check's bench line: mode (persist / pertile / ...), d, S, causality, TFLOP/s; `dispatched` at its end marks the
# launch the library would pick.
BENCH = re.compile(r"bench sm90_fwd_(\w+) d=(\d+) bf16 B=\d+ H=\d+ S=(\d+) (\S+)\s+median [\d.]+ ms\s+([\d.]+) TFLOP")
# sm90_peer.py's line: peer (cudnn / flash2), d, S, causality, TFLOP/s.
PEER = re.compile(r"peer (\w+)\s+d=(\d+) bf16 B=\d+ H=\d+ S=(\d+) (\S+)\s+median [\d.]+ ms\s+([\d.]+) TFLOP")
# The sm90 path's bars (issue 4): >= CUDNN_BAR_LONG x cuDNN from LONG_FROM keys, >= CUDNN_BAR_SHORT x below; >= FA2_BAR x FA2.
CUDNN_BAR_LONG, CUDNN_BAR_SHORT, LONG_FROM, FA2_BAR = 1.00, 0.90, 2048, 1.8


def run_name(heading):
    """NAME of `== DIR/sm90_check_NAME ARGS`; a forced grid makes a run of its own (pd --ctas -1 is pd@ctas-1)."""
    words = heading.split()
    name = words[1].rsplit("_", 1)[-1]
    for flag, value in zip(words[2:], words[3:]):
        if flag == "--ctas":
            name += f"@{flag[2:]}{value}"
    return name
