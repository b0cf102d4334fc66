// Internal to api/config: what the four configuration forms share (docs/spec.md §3,
// docs/config.md). YAML fields with their lines, the error vocabulary
// "SOURCE:LINE: [CONTEXT: ]WHAT", typed field readers, queue paths, the
// common queue fields and the queue table of forms 1-3; and the entry point
// of each form (config_forms.cc: forms 1-3, config_scenario.cc: form 4),
// which config.cc picks per YAML document.
#ifndef HDRF_API_CONFIG_YAML_FIELDS_H_
#define HDRF_API_CONFIG_YAML_FIELDS_H_

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/config.h"
#include "hdrf/quantity.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf::config {

// How a value looks, for "expected X, got Y" messages.
std::string Describe(const YAML::Node& node);
std::string JoinNames(std::initializer_list<const char*> names);  // "a, b or c"
std::string FormatNumber(double v);                                // %g
std::string ToLower(std::string s);

// One key of a YAML map with its value. `line` is the key's line,
// `value_line` the value's (the key's for a null value).
struct Field {
  std::string key;
  int line = 0;
  YAML::Node value;
  int value_line = 0;

  int ValueLine() const { return value_line; }
};

// The error vocabulary of one source: every message is
// "SOURCE:LINE: [CONTEXT: ]WHAT". Each YAML document is parsed on its own
// (see SplitDocuments), so a Reporter also knows the line offset of the
// document its nodes come from.
class Reporter {
 public:
  explicit Reporter(std::string source, int line_offset = 0)
      : source_(std::move(source)), line_offset_(line_offset) {}

  const std::string& source() const { return source_; }

  // The same source, for a document whose first line is `line_offset` + 1.
  Reporter ForDocument(int line_offset) const { return Reporter(source_, line_offset); }

  // 1-based line of `node` in the source, or `fallback` when yaml-cpp has no
  // mark for it (null values get the mark of the next token, so callers pass
  // the key's line for those).
  int LineOf(const YAML::Node& node, int fallback) const {
    const YAML::Mark m = node.Mark();
    if (m.is_null() || node.IsNull()) return fallback;
    return m.line + 1 + line_offset_;
  }

  Status Error(int line, const std::string& context, const std::string& what) const {
    std::string msg = source_ + ":" + std::to_string(line < 1 ? 1 : line) + ": ";
    if (!context.empty()) msg += context + ": ";
    msg += what;
    return Status::InvalidArgument(std::move(msg));
  }

 private:
  std::string source_;
  int line_offset_ = 0;
};

// The keys of a YAML map in file order. Duplicate keys and keys that are not
// scalars are errors (yaml-cpp keeps duplicates silently).
class MapView {
 public:
  static StatusOr<MapView> Make(const Reporter& rep, const YAML::Node& node,
                                int fallback_line, const std::string& context,
                                const std::string& what) {
    MapView view;
    view.line_ = rep.LineOf(node, fallback_line);
    if (!node.IsMap()) {
      return rep.Error(view.line_, context,
                       what + " must be a map, got " + Describe(node));
    }
    std::map<std::string, int> seen;
    for (const auto& kv : node) {
      const YAML::Node k = kv.first;
      const int kline = rep.LineOf(k, view.line_);
      if (!k.IsScalar()) {
        return rep.Error(kline, context, "keys of " + what + " must be plain names, got " +
                                             Describe(k));
      }
      auto [pos, inserted] = seen.emplace(k.Scalar(), kline);
      if (!inserted) {
        return rep.Error(kline, context,
                         "duplicate key '" + k.Scalar() + "' in " + what +
                             " (first at line " + std::to_string(pos->second) + ")");
      }
      view.fields_.push_back(Field{k.Scalar(), kline, kv.second, rep.LineOf(kv.second, kline)});
    }
    return view;
  }

  int line() const { return line_; }
  const std::vector<Field>& fields() const { return fields_; }

  // nullptr when `key` is absent.
  const Field* Get(std::string_view key) const {
    for (const Field& f : fields_) {
      if (f.key == key) return &f;
    }
    return nullptr;
  }
  bool Has(std::string_view key) const { return Get(key) != nullptr; }

  // Every key must be one of `allowed`.
  Status CheckKeys(const Reporter& rep, const std::string& context, const std::string& what,
                   std::initializer_list<const char*> allowed) const {
    for (const Field& f : fields_) {
      bool ok = false;
      for (const char* a : allowed) ok = ok || f.key == a;
      if (!ok) {
        return rep.Error(f.line, context,
                         "unknown key '" + f.key + "' in " + what + " (expected " +
                             JoinNames(allowed) + ")");
      }
    }
    return Status::Ok();
  }

 private:
  int line_ = 0;
  std::vector<Field> fields_;
};

// ---- scalars (a YAML string holding a number is accepted) ----
StatusOr<std::string> GetString(const Reporter& rep, const Field& f, const std::string& ctx, bool allow_empty);
std::optional<double> ToDouble(std::string_view s);
std::optional<int64_t> ToInt(std::string_view s);
// A finite number (int or float).
StatusOr<double> GetNumber(const Reporter& rep, const Field& f, const std::string& ctx);
StatusOr<int64_t> GetInt(const Reporter& rep, const Field& f, const std::string& ctx, int64_t lo, int64_t hi,
                         const std::string& expected);
StatusOr<bool> GetBool(const Reporter& rep, const Field& f, const std::string& ctx);
StatusOr<QueueState> GetState(const Reporter& rep, const Field& f, const std::string& ctx);

// Which resource names are allowed: those of the cluster when one is given,
// otherwise every name IsKnownResourceName accepts.
struct ResourceScope {
  const ResourceAmounts* cluster = nullptr;

  bool Allows(const std::string& name) const {
    if (cluster != nullptr) return cluster->count(name) > 0;
    return IsKnownResourceName(name);
  }
};


// A map resource -> quantity (yaml_fields.cc).
StatusOr<ResourceAmounts> GetResources(const Reporter& rep, const Field& f, const std::string& ctx,
                                       const ResourceScope& scope, bool volcano_wrap);
// A cluster capacity: names must satisfy IsKnownResourceName; at least one.
StatusOr<ResourceAmounts> GetCluster(const Reporter& rep, const Field& f);

// The deepest YAML nesting any configuration form or scenario may use: maps
// and lists inside at most this many others (config.cc, LoadDocs).
inline constexpr int kMaxYamlDepth = 128;

// ---- queue paths and fields ----
// `checked` (CheckName or CheckQueuePath of hdrf/spec.h) as an error at
// `line`; Ok when it is. The message shows the name escaped, not raw.
Status NameAt(const Reporter& rep, int line, const Status& checked);
StatusOr<std::string> GetPath(const Reporter& rep, const Field& f, const std::string& ctx);
std::string QueueCtx(const std::string& path);  // "queue PATH"
// Applies one of the common queue fields (weight, capability, guarantee,
// reclaimable, state, minUserLimitPercent, userLimitFactor) to `q`. Sets
// `*handled` to false for any other key. `*weight` records whether a weight
// was given.
Status ApplyQueueField(const Reporter& rep, const Field& f, const std::string& ctx, const ResourceScope& scope,
                       bool volcano_wrap, QueueSpec* q, std::optional<double>* weight, bool* handled);

#define HDRF_QUEUE_FIELDS \
  "weight", "capability", "guarantee", "reclaimable", "state", "minUserLimitPercent", \
      "userLimitFactor"

// Queues of forms 1-3, keyed by path, in the order they were first named.
// Form 1 creates implicit parents (from the hierarchy annotations) that carry
// only a weight; an explicit definition of the same path later fills them.
class QueueTable {
 public:
  explicit QueueTable(const Reporter& rep) : rep_(rep) {}

  // An implicit parent named by a hierarchy annotation at `line`.
  Status AddImplicit(const std::string& path, std::optional<double> weight, int line) {
    Rec& r = Ensure(path, line);
    if (weight) HDRF_RETURN_IF_ERROR(SetWeight(r, *weight, line));
    return Status::Ok();
  }

  // A queue the file defines; `weight` is set when the file gives one.
  Status AddExplicit(QueueSpec spec, std::optional<double> weight, int weight_line) {
    auto it = index_.find(spec.path);
    if (it != index_.end() && recs_[it->second].is_explicit) {
      return rep_.Error(spec.line, "",
                        "duplicate queue " + spec.path + " (first defined at line " +
                            std::to_string(recs_[it->second].spec.line) + ")");
    }
    Rec& r = Ensure(spec.path, spec.line);
    std::optional<double> old_weight = r.weight;
    const int old_weight_line = r.weight_line;
    r.spec = std::move(spec);
    r.is_explicit = true;
    if (old_weight) r.spec.weight = *old_weight;
    if (weight) HDRF_RETURN_IF_ERROR(SetWeight(r, *weight, weight_line));
    if (!weight && old_weight) r.weight_line = old_weight_line;
    return Status::Ok();
  }

  std::vector<QueueSpec> Take() {
    std::vector<QueueSpec> out;
    out.reserve(recs_.size());
    for (Rec& r : recs_) out.push_back(std::move(r.spec));
    return out;
  }

 private:
  struct Rec {
    QueueSpec spec;
    bool is_explicit = false;
    std::optional<double> weight;
    int weight_line = 0;
  };

  Rec& Ensure(const std::string& path, int line) {
    auto it = index_.find(path);
    if (it != index_.end()) return recs_[it->second];
    index_.emplace(path, recs_.size());
    recs_.emplace_back();
    recs_.back().spec.path = path;
    recs_.back().spec.line = line;
    return recs_.back();
  }

  Status SetWeight(Rec& r, double w, int line) {
    if (r.weight && *r.weight != w) {
      return rep_.Error(line, QueueCtx(r.spec.path),
                        "weight " + FormatNumber(w) + " conflicts with weight " +
                            FormatNumber(*r.weight) + " given at line " +
                            std::to_string(r.weight_line));
    }
    r.weight = w;
    r.weight_line = line;
    r.spec.weight = w;
    return Status::Ok();
  }

  const Reporter& rep_;
  std::vector<Rec> recs_;
  std::map<std::string, size_t> index_;
};

// ---- the forms (docs/spec.md §3) ----
// Form 1: one Volcano Queue object.
Status ParseVolcanoQueue(const Reporter& rep, const MapView& obj, const ResourceScope& scope, QueueTable* table);
// Form 2: a root Queue with spec.hierarchy.
Status ParseNestedRoot(const Reporter& rep, const MapView& obj, const ResourceScope& scope, QueueTable* table);
// Form 3: kind: HierarchicalQueue with a flat spec.queues list.
Status ParseHierarchicalQueue(const Reporter& rep, const MapView& obj, const ResourceScope& scope,
                              QueueTable* table);
// Form 4: a scenario document.
StatusOr<Scenario> ParseScenarioDoc(const Reporter& rep, const MapView& top);

}  // namespace hdrf::config

#endif  // HDRF_API_CONFIG_YAML_FIELDS_H_
