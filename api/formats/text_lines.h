// Line-oriented text records, shared by the CSV/JSONL readers (trace import,
// api/hdrf/trace_import.h; workloads, api/hdrf/simulate.h).
//
// A record file holds one record a line; blank lines and lines whose first
// non-blank character is '#' are skipped. Line numbers are 1-based and count
// every line, so errors can name FILE:LINE. Nothing here throws.
#ifndef HDRF_API_TEXT_LINES_H_
#define HDRF_API_TEXT_LINES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/status.h"

namespace hdrf::text {

// Splits one CSV line into cells (RFC 4180 quoting; spaces around unquoted
// cells dropped). On error returns what is wrong (with its column).
std::optional<std::string> SplitCsv(std::string_view line, std::vector<std::string>* cells);

// `cell` as one CSV field that SplitCsv and ForEachLine read back as it is:
// quoted (RFC 4180, '"' doubled) when it holds a comma, a quote, CR or LF,
// starts or ends with a blank, or starts with '#' (which would make a
// comment of the line); as it is otherwise.
std::string CsvField(std::string_view cell);

// Calls fn(line_number, text) for each line that is not blank or a comment
// (a trailing '\r' is dropped; a UTF-8 byte-order mark at the start of
// `text` is skipped, as every reader of hdrf skips it); stops at the first
// error fn returns.
// `*lines` receives the number of lines read.
template <typename Fn>
Status ForEachLine(std::string_view text, size_t* lines, Fn&& fn) {
  uint32_t number = 0;
  size_t pos = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    HDRF_RETURN_IF_ERROR(fn(number, line));
  }
  *lines = number;
  return Status::Ok();
}

}  // namespace hdrf::text

#endif  // HDRF_API_TEXT_LINES_H_
