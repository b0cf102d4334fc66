// Command-line flags of the hdrf tools, parsed by CLI11: `--name value`,
// `--name=value`, boolean `--name`, positional arguments (every hdrf command
// but serve, simulate, standby and workload, which use CLI11 directly). The tools'
// conventions (docs/tools.md) are kept on top of it: --help prints the
// command's usage text (which lists every flag) on stdout, exit 0; a usage
// error prints "hdrf CMD: what" on stderr, naming the flag ("unknown flag
// --x (see --help)", "flag --x needs a value", "flag --x: 'y' is not an
// integer"), exit 2. A flag given twice keeps its last value.
//
//   Cli cli("hdrf recover", kHelp);
//   cli.Value("db");  cli.Bool("json");
//   if (auto exit = cli.Parse(argc, argv, 2)) return *exit;
//   if (!cli.Has("db")) return cli.Usage("--db DIR is required (see --help)");
#ifndef HDRF_TOOLS_CLI_H_
#define HDRF_TOOLS_CLI_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hdrf/quantity.h"
#include "hdrf/status.h"

namespace CLI {
class App;
class Validator;
}
namespace hdrf {
struct EngineOptions;
}

namespace hdrf::tools {

class Cli {
 public:
  // `name` prefixes every message ("hdrf replay"); `usage` is the --help text.
  Cli(std::string name, std::string usage);
  ~Cli();

  void Value(const std::string& flag);  // --flag VALUE
  void Bool(const std::string& flag);   // --flag
  // Positional arguments are collected (positional()); without this call
  // the first one is an error "unexpected argument 'X'" + `hint`.
  void Positionals();
  void PositionalHint(std::string hint) { positional_hint_ = std::move(hint); }

  // Parses argv[first..]. Returns the exit code when the command is done
  // (0 after --help, 2 after a usage error, its message printed), nullopt
  // when it should go on.
  std::optional<int> Parse(int argc, char** argv, int first);

  bool Has(const std::string& flag) const;
  std::string Get(const std::string& flag, const std::string& def = "") const;
  StatusOr<int64_t> GetInt(const std::string& flag, int64_t def) const;
  // A float flag: a finite number within [lo, hi] (ParseDoubleFlag below).
  StatusOr<double> GetDouble(const std::string& flag, double def, double lo, double hi) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Prints "NAME: msg" on stderr; returns 2.
  int Usage(const std::string& msg) const;

 private:
  std::string name_, usage_, positional_hint_;
  std::unique_ptr<CLI::App> app_;
  // CLI11 writes into these (std::map: the nodes stay put); given_ lists
  // the flags that were given.
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> bools_;
  std::map<std::string, bool> given_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

// Flag value conversions with the tools' messages ("flag --NAME: 'TEXT' is
// not an integer").
StatusOr<int64_t> ParseIntFlag(const std::string& flag, const std::string& text);

// Every float flag of the tools goes through one of these two: a finite
// number within [lo, hi] — never NaN or an infinity, and bounded so that
// what the command computes from it (milliseconds, nanoseconds as integers)
// cannot overflow. "flag --NAME: 'nan' is not a number in LO..HI".
StatusOr<double> ParseDoubleFlag(const std::string& flag, const std::string& text, double lo, double hi);
// The same check as a CLI11 validator, for commands that use CLI11 directly.
CLI::Validator FiniteNumber(double lo, double hi);
// A whole number in 0..hi (decimal digits only: no sign, no exponent) as a
// CLI11 validator, for the unsigned flags of commands that use CLI11
// directly: CLI11's own conversion lets "-1" through as a huge number.
// "'-1' is not a whole number in 0..4294967295".
CLI::Validator WholeNumber(uint64_t hi);

// A --cluster value: "cpu=10,memory=64Gi" -> amounts (docs/spec.md §2 quantities,
// known resource names only; hdrf::ParseResourceList), errors prefixed
// "--cluster: ".
StatusOr<ResourceAmounts> ParseClusterFlag(const std::string& text);

// The log retention flags of a command that writes a store (EngineOptions
// log_retention_events / log_retention_seconds, docs/storage.md "Log
// retention"): --log-retention-events N|all and --log-retention-seconds S.
// RetentionFlags registers them (before Parse); ParseRetentionFlags reads
// them into *o, or returns the usage error's exit code.
// HDRF_RETENTION_HELP is their --help text (a literal, to go inside one).
#define HDRF_RETENTION_HELP \
    "  --log-retention-events N   keep at least the last N logged events in the\n" \
    "                      store (all: every one) for `hdrf workload import\n" \
    "                      --from-db`; default: the log since the checkpoint\n" \
    "                      before the newest (docs/storage.md \"Log retention\")\n" \
    "  --log-retention-seconds S  keep at least the events of the last S seconds\n" \
    "                      (by event time); default 0 (off)\n"
void RetentionFlags(Cli& flags);
std::optional<int> ParseRetentionFlags(const Cli& flags, EngineOptions* o);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_CLI_H_
