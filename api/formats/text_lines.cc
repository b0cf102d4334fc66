#include "api/formats/text_lines.h"


namespace hdrf::text {

std::optional<std::string> SplitCsv(std::string_view line, std::vector<std::string>* cells) {
  cells->clear();
  size_t i = 0;
  for (;;) {
    std::string cell;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i < line.size() && line[i] == '"') {
      const size_t open = i++;
      for (;;) {
        if (i >= line.size())
          return "the quoted field at column " + std::to_string(open + 1) + " has no closing quote";
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        cell += line[i++];
      }
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',')
        return "unexpected text after the quoted field at column " + std::to_string(open + 1);
    } else {
      const size_t start = i;
      while (i < line.size() && line[i] != ',') ++i;
      std::string_view raw = line.substr(start, i - start);
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
      if (raw.find('"') != std::string_view::npos)
        return "a quote inside the unquoted field at column " + std::to_string(start + 1) +
               " (quote the whole field and double the quote)";
      cell.assign(raw);
    }
    cells->push_back(std::move(cell));
    if (i >= line.size()) return std::nullopt;
    ++i;  // the comma
  }
}

std::string CsvField(std::string_view cell) {
  const bool quote = cell.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!cell.empty() && (cell.front() == '#' || cell.front() == ' ' || cell.front() == '\t' ||
                                        cell.back() == ' ' || cell.back() == '\t'));
  if (!quote) return std::string(cell);
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace hdrf::text
