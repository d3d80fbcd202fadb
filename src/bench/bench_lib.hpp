// The benchmark's entry point: times attention_forward over the standard grid (src/cases/cases.hpp bench_grid) and
// extra shapes, on every device and kernel path, and writes a table, CSV and JSON. One function is the whole
// interface, so that the CLI (`flashtile bench`) and the standalone flashtile_bench (bench/bench.cpp) run the same
// code.
#pragma once

// Runs the benchmark with command-line arguments (argv[0] is the program name); returns the exit status:
// 0 all cases ran or were refused with a reason, 1 a case failed, 2 bad usage.
// prog: the name usage and errors give (`flashtile bench` from the CLI).
int bench_main(int argc, char** argv, const char* prog = "flashtile_bench");
