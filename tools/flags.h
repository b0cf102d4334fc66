// A small command-line flag parser for the hdrf tools: `--name value`,
// `--name=value`, boolean `--name`, positional arguments. Unknown flags and
// missing values are errors that name the flag. Being replaced by the CLI11
// one in tools/cli.h (hdrf queues and explain still use this one).
#ifndef HDRF_TOOLS_FLAGS_H_
#define HDRF_TOOLS_FLAGS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hdrf/quantity.h"
#include "hdrf/status.h"

namespace hdrf::tools {

class Flags {
 public:
  // `with_value`: flags that take a value; `booleans`: flags that don't.
  Flags(std::set<std::string> with_value, std::set<std::string> booleans)
      : with_value_(std::move(with_value)), booleans_(std::move(booleans)) {}
  Status Parse(int argc, char** argv, int first);
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& def = "") const;
  StatusOr<int64_t> GetInt(const std::string& name, int64_t def) const;
  StatusOr<double> GetDouble(const std::string& name, double def) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::set<std::string> with_value_, booleans_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// A --cluster value: "cpu=10,memory=64Gi" -> amounts (SPEC §2 quantities,
// known resource names only).
StatusOr<ResourceAmounts> ParseClusterFlag(const std::string& text);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_FLAGS_H_
