// Resource amounts for people: the largest unit that keeps three
// significant digits (presentation only; the tools print exact amounts with
// --exact and in JSON).
//
//   HumanQuantity("cpu", 6'390'000'000)          -> "6.39M"  (6.39 million cores)
//   HumanQuantity("cpu", 1500)                   -> "1.5"    (cores)
//   HumanQuantity("cpu", 250)                    -> "250m"
//   HumanQuantity("memory", 48.9 * 2^40)         -> "48.9Ti"
//   HumanQuantity("nvidia.com/gpu", 1'320'000'000) -> "1.32M"  (units)
//
// Units: cpu in cores, memory (and every byte resource, docs/spec.md §2) in bytes
// with the binary suffixes Ki Mi Gi Ti Pi Ei, every other resource in units
// with the SI suffixes k M G T P; amounts below one core or unit print in
// milli-units ("250m"), bytes below 1Ki as a plain number. Each result is a
// valid Kubernetes quantity. A rounded value keeps its three digits
// ("1.00Ti" is 1Ti and a little more); an exact one drops trailing zeros
// ("1Ti", "64"). kUnlimited prints as "inf", negative amounts with a '-'.
#ifndef HDRF_TOOLS_HUMAN_QUANTITY_H_
#define HDRF_TOOLS_HUMAN_QUANTITY_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace hdrf::tools {

// `amount` is in the canonical unit of `resource` (docs/spec.md §2: millicores,
// bytes or milli-units).
std::string HumanQuantity(std::string_view resource, int64_t amount);

// A resource name for column headers: the part after the last '/' of an
// extended resource ("nvidia.com/gpu" -> "gpu"), the name itself otherwise.
std::string ShortResourceName(std::string_view resource);

// A fraction as a percentage with three significant digits: 0.3745 ->
// "37.5%", 1 -> "100%", 0.05 -> "5.00%", 0 -> "0%"; below 0.01% "<0.01%".
std::string HumanPercent(double fraction);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_HUMAN_QUANTITY_H_
