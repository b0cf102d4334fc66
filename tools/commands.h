// The hdrf subcommands. Each returns the process exit code: 0 success,
// 1 failure of the work, 2 bad usage (unknown flag, missing argument).
#ifndef HDRF_TOOLS_COMMANDS_H_
#define HDRF_TOOLS_COMMANDS_H_

namespace hdrf::tools {

int CmdSim(int argc, char** argv);      // hdrf sim FILE
int CmdQueues(int argc, char** argv);   // hdrf queues --config FILE | --db DIR
int CmdTrace(int argc, char** argv);    // hdrf trace gen ...
int CmdTraceImport(int argc, char** argv);  // hdrf trace import ... (cmd_trace_import.cc)
int CmdReplay(int argc, char** argv);   // hdrf replay --trace FILE ...
int CmdRecover(int argc, char** argv);  // hdrf recover --db DIR
int CmdDemo(int argc, char** argv);     // hdrf demo (README command one)
int CmdExplain(int argc, char** argv);  // hdrf explain --job NAME ...
int CmdSimulate(int argc, char** argv); // hdrf simulate --config FILE --workload FILE (cmd_simulate.cc)
int CmdStandby(int argc, char** argv);  // hdrf standby --db DIR (cmd_standby.cc)
int CmdWorkload(int argc, char** argv); // hdrf workload gen|import ... (cmd_workload.cc)
int CmdServe(int argc, char** argv);    // hdrf serve --db DIR (cmd_serve.cc)
int CmdVersion(int argc, char** argv);  // hdrf version | hdrf --version (cmd_version.cc)

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_COMMANDS_H_
