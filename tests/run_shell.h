// Running a shell command from a test and taking what it prints: one helper
// for the tests that run the hdrf binary or other programs as a user would.
//
//   RunShell("cmd 2>&1")          stdout (and stderr if redirected), exit code
//   RunCaptured("cmd", dir)       stdout and stderr apart (files under dir),
//                                 stdin from /dev/null
//   Slurp(path)                   a file's bytes ("" when it cannot be read)
#ifndef HDRF_TESTS_RUN_SHELL_H_
#define HDRF_TESTS_RUN_SHELL_H_

#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hdrf::testing {

struct ShellResult {
  int code = -1;    // exit code; -1 when it did not exit normally
  std::string out;  // stdout (RunShell: add 2>&1 to the command for stderr too)
  std::string err;  // stderr (RunCaptured only)
  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::stringstream ss(out);
    for (std::string l; std::getline(ss, l);) v.push_back(l);
    return v;
  }
  std::string last_line() const {
    const std::vector<std::string> v = lines();
    return v.empty() ? "" : v.back();
  }
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

// Runs `command` with stdout and stderr into files of the directory `dir`
// (named outN/errN, N counting the calls of this process; kept for a look
// after a failure) and stdin from /dev/null.
inline ShellResult RunCaptured(const std::string& command, const std::string& dir) {
  static std::atomic<int> calls{0};
  const std::string n = std::to_string(calls++);
  const std::string out = dir + "/out" + n, err = dir + "/err" + n;
  const int st = std::system(("{ " + command + "; } >'" + out + "' 2>'" + err + "' </dev/null").c_str());
  ShellResult r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_RUN_SHELL_H_
