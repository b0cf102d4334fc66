// OpenInputFile and ReadInputFile (api/hdrf/input_file.h).
#include "hdrf/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hdrf {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

std::string Limit(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  return std::to_string(bytes) + " bytes";
}

Status TooLarge(const std::string& path, uint64_t size, uint64_t max_bytes) {
  return Status::IoError(path + ": " + std::to_string(size) + (size > max_bytes ? "" : "+") +
                                 " bytes, over the " + Limit(max_bytes) + " limit for an input file");
}

}  // namespace

StatusOr<int> OpenInputFile(const std::string& path, uint64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::IoError(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::IoError(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(path + ": not a regular file (" + KindOf(st.st_mode) +
                                   "); hdrf reads input only from regular files");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

StatusOr<std::string> ReadInputFile(const std::string& path, uint64_t max_bytes) {
  uint64_t size = 0;
  HDRF_ASSIGN_OR_RETURN(const int fd, OpenInputFile(path, &size));
  if (size > max_bytes) {
    ::close(fd);
    return TooLarge(path, size, max_bytes);
  }
  std::string out;
  out.resize(static_cast<size_t>(size));
  size_t have = 0;
  for (;;) {
    if (have == out.size()) {  // the file may have grown since fstat
      if (out.size() >= max_bytes) {
        char probe;
        const ssize_t n = ::read(fd, &probe, 1);
        if (n == 0) break;
        ::close(fd);
        if (n < 0) return Status::IoError(path + ": cannot read: " + std::strerror(errno));
        return TooLarge(path, max_bytes, max_bytes);
      }
      out.resize(static_cast<size_t>(std::min<uint64_t>(max_bytes, out.size() + (uint64_t{1} << 16))));
    }
    const ssize_t n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::IoError(path + ": cannot read: " + std::strerror(err));
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(have);
  return out;
}

}  // namespace hdrf
