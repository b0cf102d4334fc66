#include "tools/flags.h"

#include "tools/cli.h"

namespace hdrf::tools {

Status Flags::Parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool has_eq = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_eq = true;
    }
    if (booleans_.count(name)) {
      if (has_eq) return Status::InvalidArgument("flag --" + name + " takes no value");
      values_[name] = "true";
    } else if (with_value_.count(name)) {
      if (!has_eq) {
        if (i + 1 >= argc) return Status::InvalidArgument("flag --" + name + " needs a value");
        value = argv[++i];
      }
      values_[name] = value;
    } else {
      return Status::InvalidArgument("unknown flag --" + name + " (see --help)");
    }
  }
  return Status::Ok();
}

std::string Flags::Get(const std::string& name, const std::string& def) const {
  auto it = values_.find(name);
  return it == values_.end() ? def : it->second;
}

StatusOr<int64_t> Flags::GetInt(const std::string& name, int64_t def) const {
  auto it = values_.find(name);
  return it == values_.end() ? StatusOr<int64_t>(def) : ParseIntFlag(name, it->second);
}

StatusOr<double> Flags::GetDouble(const std::string& name, double def) const {
  auto it = values_.find(name);
  return it == values_.end() ? StatusOr<double>(def) : ParseDoubleFlag(name, it->second);
}

StatusOr<ResourceAmounts> ParseClusterFlag(const std::string& text) {
  ResourceAmounts out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto eq = item.find('=');
    if (eq == std::string::npos)
      return Status::InvalidArgument("--cluster: '" + item + "' is not NAME=QUANTITY");
    std::string name = item.substr(0, eq);
    if (!IsKnownResourceName(name))
      return Status::InvalidArgument("--cluster: unknown resource '" + name + "'");
    HDRF_ASSIGN_OR_RETURN(out[name], ParseQuantity(name, item.substr(eq + 1)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace hdrf::tools
