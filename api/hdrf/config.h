// Loaders for queue configurations and scenarios (docs/spec.md §3, §10, §12).
//
// Four YAML forms are read (docs/config.md describes each with an example):
//   1. Volcano `Queue` objects with the `volcano.sh/hierarchy` and
//      `volcano.sh/hierarchy-weights` annotations, one object per document;
//   2. one `root` Queue whose `spec.hierarchy` nests the child queues;
//   3. a `kind: HierarchicalQueue` object with a flat `spec.queues` list;
//   4. a scenario (docs/spec.md §10): `cluster`, `queues`, `jobs`, `steps`.
//
// The loaders check syntax, types, ranges and names only; the rules that
// relate queues to one another (a child's capability within its parent's and
// so on) belong to the engine. Every error is an InvalidArgument status whose
// message starts with "SOURCE:LINE: " (LINE is 1-based) and says what is
// wrong, for example
//   scenario.yaml:7: queue root/eng: unknown resource 'cpus' in capability
// A file that cannot be read is an IoError that names the path. No function
// here throws.
#ifndef HDRF_CONFIG_H_
#define HDRF_CONFIG_H_

#include <string>
#include <string_view>

#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf {

// Parses a queue configuration given as YAML text. The form is detected per
// document: forms 1-3 of docs/spec.md §3, plus an optional `kind: Cluster` document
// (or a top-level `cluster:` map in a form 2/3 object) that fills
// QueueConfig::cluster. A scenario (form 4) is accepted as well: its cluster
// and queues are returned and the rest of it is checked but dropped.
// `source_name` (usually the file name) prefixes every error message.
StatusOr<QueueConfig> ParseQueueConfig(std::string_view yaml_text,
                                       const std::string& source_name);

// Reads the file at `path` and parses it with ParseQueueConfig, naming the
// file by `path` in errors.
StatusOr<QueueConfig> LoadQueueConfigFile(const std::string& path);

// Parses a scenario (docs/spec.md §10, with the §12 keys `overcommitFactor` and the
// job key `minAvailable`) given as YAML text holding one document. When the
// scenario has no `steps`, Scenario::steps is [fill]. Every QueueSpec,
// JobSpec and ScenarioStep carries the line it came from.
StatusOr<Scenario> ParseScenario(std::string_view yaml_text,
                                 const std::string& source_name);

// Reads the file at `path` and parses it with ParseScenario, naming the file
// by `path` in errors.
StatusOr<Scenario> LoadScenarioFile(const std::string& path);

// The queues and cluster of `cfg` as a form 3 configuration (`kind:
// HierarchicalQueue`, each queue with its full parent path and the fields
// that differ from a new queue's, every name and quantity quoted, exact
// amounts; then a `kind: Cluster` document when cfg.cluster is non-empty)
// that ParseQueueConfig reads back to the same queues, in the same order,
// and the same cluster. `name` is metadata.name; `comment`, when not empty,
// opens the file as `# ` lines. `hdrf queues --db DIR --yaml` writes a
// store's tree this way.
std::string FormatQueueConfig(const QueueConfig& cfg, const std::string& name = "hdrf",
                              const std::string& comment = "");

}  // namespace hdrf

#endif  // HDRF_CONFIG_H_
