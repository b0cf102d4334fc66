// What this build of hdrf is: the four numbers a bug report needs
// (`hdrf --version` prints them, docs/tools.md "hdrf version").
#ifndef HDRF_BUILD_INFO_H_
#define HDRF_BUILD_INFO_H_

#include <cstdint>

namespace hdrf {

struct BuildInfo {
  // The library version, "0.1.0": HDRF_VERSION_STRING (hdrf/version.h) of
  // the build, the same string as hdrf_version() of the C interface.
  const char* version;
  // HDRF_C_API_VERSION (hdrf/c.h) of the build: raised when a C function
  // changes incompatibly.
  int c_api_version;
  // The on-disk format that the store writes and accepts (docs/storage.md
  // "Versioning"): a store of another format is refused when opened.
  uint32_t store_format_version;
  // Meson's buildtype of the library: "release", "debug",
  // "debugoptimized", "minsize", "plain" or "custom".
  const char* build_type;
};

// The values of the library linked in (static strings).
BuildInfo GetBuildInfo();

}  // namespace hdrf

#endif  // HDRF_BUILD_INFO_H_
