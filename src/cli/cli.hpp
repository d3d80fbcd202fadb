// The flashtile command line: shared pieces of its subcommands.
#pragma once

#include <flashtile/flashtile.hpp>

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace flashtile::cli {

// --name value / --name=value / --flag parsing. Unknown flags are errors naming the flag.
class Args {
 public:
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags, const std::vector<std::string>& valued);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string str(const std::string& name, const std::string& fallback) const;
  // An integer in [min_value, max_value]; anything else (overflow included) is an error naming the option.
  long long integer(const std::string& name, long long fallback, long long min_value,
                    long long max_value = std::numeric_limits<long long>::max()) const;
  double real(const std::string& name, double fallback) const;

 private:
  std::map<std::string, std::string> values_;
};

std::string json_escape(const std::string& s);

int cmd_info(int argc, char** argv);
int cmd_run(int argc, char** argv);

}  // namespace flashtile::cli
