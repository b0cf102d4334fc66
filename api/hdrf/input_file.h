// Reading input files: every configuration, scenario, workload, node list,
// import source and trace hdrf reads goes through these two calls, so all of
// them refuse the same things with the same messages (docs/config.md "Input
// files"): anything but a regular file (a directory, a FIFO — refused, never
// waited on —, /dev/zero or another device; symbolic links are followed to
// what they name), and a file over the size limit.
#ifndef HDRF_INPUT_FILE_H_
#define HDRF_INPUT_FILE_H_

#include <cstdint>
#include <string>

#include "hdrf/status.h"

namespace hdrf {

// The most bytes ReadInputFile reads by default: 4 GiB.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{1} << 32;

// Opens `path` for reading without blocking and checks that it is a regular
// file; returns the descriptor (the caller closes it) and its size in
// `*size`. Errors name the path: "PATH: cannot open: REASON", "PATH: not a
// regular file (a FIFO); hdrf reads input only from regular files".
StatusOr<int> OpenInputFile(const std::string& path, uint64_t* size);

// The whole regular file at `path`; refuses a file of more than `max_bytes`
// ("PATH: 5000000000 bytes, over the 4 GiB limit for an input file") and
// one that grows past it while being read.
StatusOr<std::string> ReadInputFile(const std::string& path, uint64_t max_bytes = kMaxInputFileBytes);

}  // namespace hdrf

#endif  // HDRF_INPUT_FILE_H_
