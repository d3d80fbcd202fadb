// flashtile_bench: see bench_lib.hpp and bench/README.md.
#include "bench_lib.hpp"

int main(int argc, char** argv) { return bench_main(argc, argv); }
