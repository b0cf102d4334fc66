// Running a shell command from a test and taking what it prints: one helper
// for the tests that run the hdrf binary or other programs as a user would.
#ifndef HDRF_TESTS_RUN_SHELL_H_
#define HDRF_TESTS_RUN_SHELL_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace hdrf::testing {

struct ShellResult {
  int code = -1;  // exit code; -1 when it did not exit normally
  std::string out;  // stdout (add 2>&1 to the command for stderr too)
};

inline ShellResult RunShell(const std::string& command) {
  ShellResult r;
  FILE* f = ::popen(command.c_str(), "r");
  if (!f) return r;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) r.out.append(buf, n);
  const int st = ::pclose(f);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_RUN_SHELL_H_
