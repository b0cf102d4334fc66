// Commands not built yet; each is replaced by its own cmd_*.cc file.
#include <cstdio>

#include "tools/commands.h"

namespace hdrf::tools {

static int NotYet(const char* name) {
  std::fprintf(stderr, "hdrf %s: not built yet\n", name);
  return 1;
}

int CmdRecover(int, char**) { return NotYet("recover"); }

}  // namespace hdrf::tools
