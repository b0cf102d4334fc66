// One JSON value on one line, as the tools print it (docs/spec.md §10, §11): an
// nlohmann::ordered_json (fields keep the order they were added in) written
// with ", " and ": " separators, integers in decimal, doubles in the
// shortest form that reads back to the same double ("%.*g": 1, 0.1,
// 2.5e+06; not 1.0), non-finite doubles as null. Strings are escaped by
// nlohmann-json; bytes that are not UTF-8 become U+FFFD.
//
//   hdrf::Json j;  j["events"] = 5;  j["share"] = 0.5;
//   std::puts(hdrf::JsonLine(j).c_str());      // {"events": 5, "share": 0.5}
//
// Not a public header (not installed, so no installed header names an
// nlohmann type): the formats library's, shared with the scenario runner
// (api/sim/sim.cc, SimResultToJson) and the tools' JSON output.
#ifndef HDRF_API_FORMATS_JSON_LINE_H_
#define HDRF_API_FORMATS_JSON_LINE_H_

#include <nlohmann/json.hpp>
#include <string>

namespace hdrf {

using Json = nlohmann::ordered_json;

std::string JsonLine(const Json& value);

}  // namespace hdrf

#endif  // HDRF_API_FORMATS_JSON_LINE_H_
