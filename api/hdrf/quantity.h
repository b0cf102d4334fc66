// Kubernetes quantities (docs/spec.md §2) and the resource space of a cluster.
//
// Every amount inside hdrf is an int64 in the resource's canonical unit:
//   cpu     -> millicores      ("2" = 2000, "500m" = 500, "2c" = 2000)
//   memory  -> bytes           ("1Gi" = 1073741824, "1000m" = 1)
//   others  -> milli-units     ("1" nvidia.com/gpu = 1000)
// Parsing is exact (no floating point): a quantity finer than the unit, a
// negative one, an unknown suffix or one that overflows int64 is an error
// whose message quotes the offending text.
#ifndef HDRF_QUANTITY_H_
#define HDRF_QUANTITY_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include "hdrf/status.h"

namespace hdrf {

// Canonical unit family of a resource name.
enum class ResourceUnit { kMilli, kBytes };

// memory, ephemeral-storage and hugepages-* count bytes; everything else
// (cpu, pods, nvidia.com/gpu, extended resources) counts milli-units.
ResourceUnit UnitOf(std::string_view resource);

// True for names a cluster may use: cpu, memory, pods, ephemeral-storage,
// hugepages-<size>, or a domain-qualified extended resource such as
// nvidia.com/gpu. Used to reject typos ("cpus", "gpu") when no cluster lists
// the resources explicitly.
bool IsKnownResourceName(std::string_view resource);

// Parses `text` as a quantity of `resource`, in canonical units.
StatusOr<int64_t> ParseQuantity(std::string_view resource, std::string_view text);

// Prints a canonical amount in the shortest exact Kubernetes form:
// cpu 1500 -> "1500m", cpu 2000 -> "2", memory 1073741824 -> "1Gi".
// kUnlimited prints as "inf".
std::string FormatQuantity(std::string_view resource, int64_t amount);

// The amount used for "no capability".
inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// Resource name -> canonical amount. Sorted by name, so iteration order is
// deterministic.
using ResourceAmounts = std::map<std::string, int64_t>;

// Adds resource `name` with the quantity `text` to *out. Errors
// (InvalidArgument, *out unchanged): "unknown resource 'cpus'" (with
// `known_names_only`, a name IsKnownResourceName rejects), "resource 'cpu'
// given twice", "cpu: <ParseQuantity's message>".
Status AddResourceQuantity(std::string_view name, std::string_view text, ResourceAmounts* out,
                           bool known_names_only = true);

struct ResourceListOptions {
  // Characters that separate the items. Default: ",".
  std::string_view separators = ",";
  // Skip empty items ("cpu=1,,memory=1"); otherwise they are errors.
  // Default: false.
  bool skip_empty_items = false;
  // Names must pass IsKnownResourceName. Default: true.
  bool known_names_only = true;
};

// A resource list as the tools, the C interface and event imports write it:
// "cpu=500m,memory=1Gi" (blanks around items, names and values ignored; an
// empty or blank text is the empty list). Errors name the item: "'cpu' is
// not RESOURCE=QUANTITY", "'=1' has no resource name", and those of
// AddResourceQuantity.
StatusOr<ResourceAmounts> ParseResourceList(std::string_view text, const ResourceListOptions& options = {});

}  // namespace hdrf

#endif  // HDRF_QUANTITY_H_
