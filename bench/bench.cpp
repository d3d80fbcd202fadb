// flashtile_bench: the benchmark as a program of its own (src/bench/bench_lib.hpp, bench/README.md).
#include "bench_lib.hpp"

int main(int argc, char** argv) { return bench_main(argc, argv); }
