// hdrf: command-line tools over the hdrf engine API (docs/tools.md).
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/commands.h"

namespace {

const char kUsage[] =
    "usage: hdrf COMMAND [FLAGS]\n"
    "\n"
    "commands:\n"
    "  sim FILE                 run a scenario (spec §10), print JSON\n"
    "  queues --config FILE     print a queue tree like vqueues\n"
    "  queues --db DIR          print the tree of a store; --yaml: as a queue\n"
    "                           configuration (what simulate --config reads)\n"
    "  trace gen ...            write a synthetic event trace\n"
    "  trace import ...         convert a CSV/JSONL event export to a trace\n"
    "  trace info|cut ...       describe or shorten a trace\n"
    "  replay --trace FILE ...  apply a trace, report throughput and latency\n"
    "  replay --from-db DIR     replay a store's own log as a load test\n"
    "  recover --db DIR         rebuild the state from a store\n"
    "  explain --job NAME ...   why a job is or is not the next to run\n"
    "  simulate --config FILE --workload FILE [--db DIR]\n"
    "                           run a workload on a virtual clock (spec §13);\n"
    "                           --db also writes its events into a new store\n"
    "  standby --db DIR         follow a store, take over when its writer dies\n"
    "  serve --db DIR           /metrics, JSON and a live web page of a store\n"
    "  demo                     generate, replay, crash and recover (README)\n"
    "  workload gen ...         write a synthetic workload for simulate (spec §13)\n"
    "  workload import --from volcano FILE | --from-db DIR [--since T] [--until T]\n"
    "                           a Volcano simulator event file, or a store's own\n"
    "                           history, as a workload (docs/simulate_import.md)\n"
    "  version, --version       library, C interface and store format versions,\n"
    "                           build type\n"
    "\n"
    "hdrf COMMAND --help shows the flags of a command. \"spec §N\" is section N\n"
    "of docs/spec.md, the behaviour reference.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  if (cmd == "--version") cmd = "version";
  using namespace hdrf::tools;
  if (cmd == "sim") return CmdSim(argc, argv);
  if (cmd == "queues") return CmdQueues(argc, argv);
  if (cmd == "trace") return CmdTrace(argc, argv);
  if (cmd == "replay") return CmdReplay(argc, argv);
  if (cmd == "recover") return CmdRecover(argc, argv);
  if (cmd == "demo") return CmdDemo(argc, argv);
  if (cmd == "explain") return CmdExplain(argc, argv);
  if (cmd == "simulate") return CmdSimulate(argc, argv);
  if (cmd == "standby") return CmdStandby(argc, argv);
  if (cmd == "workload") return CmdWorkload(argc, argv);
  if (cmd == "serve") return CmdServe(argc, argv);
  if (cmd == "version") return CmdVersion(argc, argv);
  std::fprintf(stderr, "hdrf: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
  return 2;
}
