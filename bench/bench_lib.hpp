// flashtile_bench: times attention_forward over the standard grid (src/cases/cases.hpp bench_grid) and extra shapes, on
// every device and kernel path, and writes a table, CSV and JSON. The logic lives here so that the CLI can expose it
// as `flashtile bench` by calling bench_main.
#pragma once

#include <flashtile/flashtile.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace flashtile::bench {

// One timed (or skipped) case on one device and path.
struct Row {
  std::string device;   // device name
  std::string backend;  // cpu, cuda, vulkan
  std::string path;     // the forced path
  std::string kernel;   // Result::kernel of the timed call
  std::string dtype;
  std::int64_t batch = 0, seqlen_q = 0, seqlen_k = 0, heads_q = 0, heads_kv = 0, head_dim = 0;
  bool causal = false;
  double ms = 0;        // median milliseconds per call
  double ms_min = 0;    // fastest call
  double tflops = 0;    // cases::attention_flops / median time
  std::string timer;    // "cuda_events" or "host_clock"
  int iters = 0, sets = 0;
  std::string status;   // "ok", "skipped" (the path refused the case), "error"
  std::string note;     // the refusal reason or error message
};

std::string rows_to_csv(const std::vector<Row>& rows);
std::string rows_to_json(const std::vector<Row>& rows, const std::string& command, const std::string& date);

}  // namespace flashtile::bench

// Runs the benchmark with command-line arguments (argv[0] is the program name); returns the exit status:
// 0 all cases ran or were refused with a reason, 1 a case failed, 2 bad usage.
// prog: the name usage and errors give (`flashtile bench` from the CLI).
int bench_main(int argc, char** argv, const char* prog = "flashtile_bench");
