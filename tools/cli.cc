#include "tools/cli.h"

#include "hdrf/engine.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hdrf::tools {

Cli::Cli(std::string name, std::string usage)
    : name_(std::move(name)), usage_(std::move(usage)), app_(std::make_unique<CLI::App>(usage_, name_)) {
  app_->set_help_flag();  // --help prints the usage text (below)
  app_->add_flag("--help,-h", help_)->disable_flag_override();
}

Cli::~Cli() = default;

void Cli::Value(const std::string& flag) {
  app_->add_option("--" + flag, values_[flag])
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->expected(1);
}

void Cli::Bool(const std::string& flag) {
  app_->add_flag("--" + flag, bools_[flag])->disable_flag_override();
}

void Cli::Positionals() { app_->add_option("args", positional_); }

std::optional<int> Cli::Parse(int argc, char** argv, int first) {
  // CLI11 takes the arguments last first. "--name=" gives the flag an empty
  // value (CLI11 would take the next argument instead).
  std::vector<std::string> args;
  for (int i = argc - 1; i >= first; --i) {
    std::string a = argv[i];
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=') {
      args.push_back("");
      a.pop_back();
    }
    args.push_back(std::move(a));
  }
  try {
    app_->parse(args);
  } catch (const CLI::ExtrasError&) {
    for (const std::string& extra : app_->remaining()) {
      if (extra.rfind("--", 0) == 0 && extra.size() > 2) {
        const std::string name = extra.substr(2, extra.find('=') - 2);
        if (bools_.count(name)) return Usage("flag --" + name + " takes no value");
        return Usage("unknown flag --" + name + " (see --help)");
      }
    }
    return Usage("unexpected argument '" + app_->remaining().front() + "'" + positional_hint_);
  } catch (const CLI::ArgumentMismatch& e) {
    // Which flag: CLI11 names it first ("--trace: 1 required TEXT missing",
    // "json was given a disallowed flag override").
    const std::string what = e.what();
    std::string flag = what.substr(0, what.find_first_of(": "));
    if (flag.rfind("--", 0) == 0) flag = flag.substr(2);
    if (bools_.count(flag)) return Usage("flag --" + flag + " takes no value");
    return Usage("flag --" + flag + " needs a value");
  } catch (const CLI::ParseError& e) {
    return Usage(e.what());
  }
  if (help_) {
    std::fputs(usage_.c_str(), stdout);
    if (!usage_.empty() && usage_.back() != '\n') std::fputc('\n', stdout);
    return 0;
  }
  for (const CLI::Option* o : app_->get_options())
    if (o->count() > 0 && o->get_name().rfind("--", 0) == 0) given_[o->get_name().substr(2)] = true;
  return std::nullopt;
}

bool Cli::Has(const std::string& flag) const { return given_.count(flag) > 0; }

std::string Cli::Get(const std::string& flag, const std::string& def) const {
  return Has(flag) ? values_.at(flag) : def;
}

StatusOr<int64_t> Cli::GetInt(const std::string& flag, int64_t def) const {
  return Has(flag) ? ParseIntFlag(flag, values_.at(flag)) : StatusOr<int64_t>(def);
}

StatusOr<double> Cli::GetDouble(const std::string& flag, double def, double lo, double hi) const {
  return Has(flag) ? ParseDoubleFlag(flag, values_.at(flag), lo, hi) : StatusOr<double>(def);
}

int Cli::Usage(const std::string& msg) const {
  std::fprintf(stderr, "%s: %s\n", name_.c_str(), msg.c_str());
  return 2;
}

StatusOr<int64_t> ParseIntFlag(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    return Status::InvalidArgument("flag --" + flag + ": '" + text + "' is not an integer");
  return static_cast<int64_t>(v);
}

namespace {

std::string Bound(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "" when `text` is a finite number within [lo, hi], else why not.
std::string OutOfRange(const std::string& text, double lo, double hi, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    return "'" + text + "' is not a number in " + Bound(lo) + ".." + Bound(hi);
  *out = v;
  return "";
}

}  // namespace

StatusOr<double> ParseDoubleFlag(const std::string& flag, const std::string& text, double lo, double hi) {
  double v = 0;
  if (std::string why = OutOfRange(text, lo, hi, &v); !why.empty())
    return Status::InvalidArgument("flag --" + flag + ": " + why);
  return v;
}

CLI::Validator FiniteNumber(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) {
        double v = 0;
        return OutOfRange(text, lo, hi, &v);
      },
      "NUMBER in " + Bound(lo) + ".." + Bound(hi));
}

CLI::Validator WholeNumber(uint64_t hi) {
  return CLI::Validator(
      [hi](std::string& text) {
        uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || p != end || v > hi)
          return "'" + text + "' is not a whole number in 0.." + std::to_string(hi);
        return std::string();
      },
      "INTEGER in 0.." + std::to_string(hi));
}

StatusOr<ResourceAmounts> ParseClusterFlag(const std::string& text) {
  auto r = ParseResourceList(text);
  if (!r.ok()) return r.status().WithContext("--cluster");
  return r;
}

void RetentionFlags(Cli& flags) {
  flags.Value("log-retention-events");
  flags.Value("log-retention-seconds");
}

std::optional<int> ParseRetentionFlags(const Cli& flags, EngineOptions* o) {
  if (flags.Has("log-retention-events")) {
    const std::string v = flags.Get("log-retention-events");
    if (v == "all") {
      o->log_retention_events = UINT64_MAX;
    } else {
      auto n = ParseIntFlag("log-retention-events", v);
      if (!n.ok() || *n < 0)
        return flags.Usage("flag --log-retention-events: '" + v + "' is neither a number of events (>= 0) nor 'all'");
      o->log_retention_events = static_cast<uint64_t>(*n);
    }
  }
  if (flags.Has("log-retention-seconds")) {
    auto s = ParseIntFlag("log-retention-seconds", flags.Get("log-retention-seconds"));
    if (!s.ok()) return flags.Usage(s.status().message());
    if (*s < 0) return flags.Usage("flag --log-retention-seconds: must be >= 0 (0: off)");
    o->log_retention_seconds = *s;
  }
  return std::nullopt;
}

}  // namespace hdrf::tools
