#!/usr/bin/env bash
# The host-cost and speed steps of the device call that measured this folder (bash .bundle/run.sh on nvidia-h200).
# .bundle: this change's libflashtile.so, flashtile_tests, flashtile_bench; .bundle/old: main at c918c57's library and
# python/ (the binding before the change) with bench/host_cost.py copied beside it.
set -u
B=.bundle
NEW="LD_LIBRARY_PATH=$PWD/$B FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so"
OLD="LD_LIBRARY_PATH=$PWD/$B/old FLASHTILE_LIBRARY=$PWD/$B/old/libflashtile.so"
env $OLD python3 $B/old/bench/host_cost.py --csv $OUT/host_cost_main.csv
env $NEW python3 bench/host_cost.py --csv $OUT/host_cost_new.csv --profile
export LD_LIBRARY_PATH=$PWD/$B FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so
$B/flashtile_tests --ft-backend=cuda -tc='conformance*'
python3 -m unittest discover -s tests/python -p 'test_*.py'
python3 bench/peers.py --quick --peers cudnn,fa2 --dim 64,128 --out $OUT/peers
python3 bench/peers_backward.py --out $OUT/peersbwd
