// hdrf version | hdrf --version: the versions of this build (docs/tools.md
// "hdrf version").
#include <cstdio>

#include "hdrf/build_info.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace hdrf::tools {
namespace {

const char kHelp[] =
    "usage: hdrf version [--json]    (or hdrf --version [--json])\n"
    "\n"
    "Prints the versions of this build, one field a line:\n"
    "  version 0.1.0               the library version (hdrf_version() in C)\n"
    "  c_api_version N             HDRF_C_API_VERSION of hdrf/c.h\n"
    "  store_format_version N      the store format it writes and reads\n"
    "                              (docs/storage.md \"Versioning\")\n"
    "  build_type release          Meson's buildtype\n"
    "  --json   the same fields as one JSON object\n";

}  // namespace

int CmdVersion(int argc, char** argv) {
  Cli cli("hdrf version", kHelp);
  cli.Bool("json");
  if (auto exit = cli.Parse(argc, argv, 2)) return *exit;
  const BuildInfo b = GetBuildInfo();
  if (cli.Has("json")) {
    std::printf("{\"version\": \"%s\", \"c_api_version\": %d, \"store_format_version\": %u, \"build_type\": \"%s\"}\n",
                b.version, b.c_api_version, static_cast<unsigned>(b.store_format_version), b.build_type);
  } else {
    std::printf("version %s\nc_api_version %d\nstore_format_version %u\nbuild_type %s\n", b.version,
                b.c_api_version, static_cast<unsigned>(b.store_format_version), b.build_type);
  }
  return 0;
}

}  // namespace hdrf::tools
