// A test's scratch directory: made under /tmp, removed with everything in
// it when the TempDir goes.
#ifndef HDRF_TESTS_TEMP_DIR_H_
#define HDRF_TESTS_TEMP_DIR_H_

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace hdrf::testing {

struct TempDir {
  std::string path;
  // /tmp/PREFIX_XXXXXX
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = "/tmp/" + prefix + "_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    path = ::mkdtemp(buf.data());
  }
  ~TempDir() { (void)std::system(("rm -rf " + path).c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_TEMP_DIR_H_
