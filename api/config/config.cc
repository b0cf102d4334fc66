#include "hdrf/config.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace hdrf {
namespace {

// ---------------------------------------------------------------------------
// Small helpers over yaml-cpp nodes.

// How a value looks, for "expected X, got Y" messages.
std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return "'" + node.Scalar() + "'";
}

std::string JoinNames(std::initializer_list<const char*> names) {
  std::string out;
  size_t i = 0;
  for (const char* n : names) {
    if (i > 0) out += (i + 1 == names.size()) ? " or " : ", ";
    out += n;
    ++i;
  }
  return out;
}

std::string FormatNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string ToLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

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

// ---------------------------------------------------------------------------
// Scalars.

StatusOr<std::string> GetString(const Reporter& rep, const Field& f, const std::string& ctx,
                                bool allow_empty) {
  if (!f.value.IsScalar() || (!allow_empty && f.value.Scalar().empty())) {
    return rep.Error(f.ValueLine(), ctx,
                     f.key + " must be a " + (allow_empty ? "" : "non-empty ") +
                         "string, got " + Describe(f.value));
  }
  return f.value.Scalar();
}

std::optional<double> ToDouble(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> ToInt(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// A finite number (int or float); YAML strings holding one are accepted.
StatusOr<double> GetNumber(const Reporter& rep, const Field& f, const std::string& ctx) {
  std::optional<double> v;
  if (f.value.IsScalar()) v = ToDouble(f.value.Scalar());
  if (!v || !std::isfinite(*v)) {
    return rep.Error(f.ValueLine(), ctx,
                     f.key + " must be a finite number, got " + Describe(f.value));
  }
  return *v;
}

StatusOr<int64_t> GetInt(const Reporter& rep, const Field& f, const std::string& ctx,
                         int64_t lo, int64_t hi, const std::string& expected) {
  std::optional<int64_t> v;
  if (f.value.IsScalar()) v = ToInt(f.value.Scalar());
  if (!v || *v < lo || *v > hi) {
    return rep.Error(f.ValueLine(), ctx,
                     f.key + " must be " + expected + ", got " + Describe(f.value));
  }
  return *v;
}

StatusOr<bool> GetBool(const Reporter& rep, const Field& f, const std::string& ctx) {
  if (f.value.IsScalar()) {
    const std::string s = ToLower(f.value.Scalar());
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  return rep.Error(f.ValueLine(), ctx,
                   f.key + " must be true or false, got " + Describe(f.value));
}

StatusOr<QueueState> GetState(const Reporter& rep, const Field& f, const std::string& ctx) {
  if (f.value.IsScalar()) {
    const std::string s = ToLower(f.value.Scalar());
    if (s == "open") return QueueState::kOpen;
    if (s == "closing") return QueueState::kClosing;
    if (s == "closed") return QueueState::kClosed;
  }
  return rep.Error(f.ValueLine(), ctx,
                   f.key + " must be open, closing or closed, got " + Describe(f.value));
}

// ---------------------------------------------------------------------------
// Resources.

// Which resource names are allowed: those of the cluster when one is given,
// otherwise every name IsKnownResourceName accepts.
struct ResourceScope {
  const ResourceAmounts* cluster = nullptr;

  bool Allows(const std::string& name) const {
    if (cluster != nullptr) return cluster->count(name) > 0;
    return IsKnownResourceName(name);
  }
};

// A map resource -> quantity. Values may be YAML strings ("30Gi") or numbers
// (30, 0.5). With `volcano_wrap`, `{resource: {...}}` (Volcano's
// spec.guarantee) is unwrapped first. A null value is an empty map.
StatusOr<ResourceAmounts> GetResources(const Reporter& rep, const Field& f,
                                       const std::string& ctx, const ResourceScope& scope,
                                       bool volcano_wrap) {
  ResourceAmounts out;
  if (f.value.IsNull()) return out;
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, f.value, f.line, ctx, f.key));
  if (volcano_wrap && m.fields().size() == 1 && m.fields()[0].key == "resource") {
    Field inner = m.fields()[0];
    inner.key = f.key;
    return GetResources(rep, inner, ctx, scope, /*volcano_wrap=*/false);
  }
  for (const Field& r : m.fields()) {
    if (!scope.Allows(r.key)) {
      return rep.Error(r.line, ctx, "unknown resource '" + r.key + "' in " + f.key);
    }
    if (!r.value.IsScalar() || r.value.Scalar().empty()) {
      return rep.Error(r.ValueLine(), ctx,
                       f.key + " " + r.key + ": expected a quantity, got " + Describe(r.value));
    }
    StatusOr<int64_t> q = ParseQuantity(r.key, r.value.Scalar());
    if (!q.ok()) return rep.Error(r.ValueLine(), ctx, f.key + " " + r.key + ": " + q.status().message());
    out[r.key] = *q;
  }
  return out;
}

// A cluster capacity: names must satisfy IsKnownResourceName; at least one.
StatusOr<ResourceAmounts> GetCluster(const Reporter& rep, const Field& f) {
  HDRF_ASSIGN_OR_RETURN(ResourceAmounts c, GetResources(rep, f, "", ResourceScope{}, false));
  if (c.empty()) return rep.Error(f.line, "", f.key + " must list at least one resource");
  return c;
}

// ---------------------------------------------------------------------------
// Queue paths and fields.

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c == '/' || c == ' ' || c == '\t') return false;
  }
  return true;
}

// "root" or "root/a/b" with non-empty components and no blanks.
bool ValidPath(std::string_view path) {
  if (path.substr(0, 4) != "root") return false;
  if (path.size() == 4) return true;
  if (path[4] != '/') return false;
  std::string_view rest = path.substr(5);
  while (true) {
    size_t slash = rest.find('/');
    if (!ValidName(rest.substr(0, slash))) return false;
    if (slash == std::string_view::npos) return true;
    rest.remove_prefix(slash + 1);
  }
}

StatusOr<std::string> GetPath(const Reporter& rep, const Field& f, const std::string& ctx) {
  HDRF_ASSIGN_OR_RETURN(std::string p, GetString(rep, f, ctx, false));
  if (!ValidPath(p)) {
    return rep.Error(f.ValueLine(), ctx,
                     f.key + " '" + p +
                         "' must be 'root' or start with 'root/' and have non-empty names");
  }
  return p;
}

std::string QueueCtx(const std::string& path) { return "queue " + path; }

// Applies one of the common queue fields (weight, capability, guarantee,
// reclaimable, state, minUserLimitPercent, userLimitFactor) to `q`. Sets
// `*handled` to false for any other key. `*weight` records whether a weight
// was given.
Status ApplyQueueField(const Reporter& rep, const Field& f, const std::string& ctx,
                       const ResourceScope& scope, bool volcano_wrap, QueueSpec* q,
                       std::optional<double>* weight, bool* handled) {
  *handled = true;
  if (f.key == "weight") {
    HDRF_ASSIGN_OR_RETURN(double w, GetNumber(rep, f, ctx));
    q->weight = w;
    *weight = w;
  } else if (f.key == "capability") {
    HDRF_ASSIGN_OR_RETURN(q->capability, GetResources(rep, f, ctx, scope, false));
  } else if (f.key == "guarantee") {
    HDRF_ASSIGN_OR_RETURN(q->guarantee, GetResources(rep, f, ctx, scope, volcano_wrap));
  } else if (f.key == "reclaimable") {
    HDRF_ASSIGN_OR_RETURN(q->reclaimable, GetBool(rep, f, ctx));
  } else if (f.key == "state") {
    HDRF_ASSIGN_OR_RETURN(q->state, GetState(rep, f, ctx));
  } else if (f.key == "minUserLimitPercent") {
    HDRF_ASSIGN_OR_RETURN(int64_t p, GetInt(rep, f, ctx, 1, 100, "an integer in 1..100"));
    q->min_user_limit_percent = static_cast<int>(p);
  } else if (f.key == "userLimitFactor") {
    HDRF_ASSIGN_OR_RETURN(double v, GetNumber(rep, f, ctx));
    if (!(v > 0)) {
      return rep.Error(f.ValueLine(), ctx,
                       "userLimitFactor must be a number above 0, got " + Describe(f.value));
    }
    q->user_limit_factor = v;
  } else {
    *handled = false;
  }
  return Status::Ok();
}

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

// ---------------------------------------------------------------------------
// Form 1: Volcano Queue objects.

std::vector<std::string> SplitSlash(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t slash = s.find('/', start);
    out.push_back(s.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) return out;
    start = slash + 1;
  }
}

// A `kind: Queue` object without spec.hierarchy. Unknown fields are ignored
// (real objects carry many). The path comes from volcano.sh/hierarchy, else
// root/<metadata.name> (a queue named root is root itself). Each weight of
// volcano.sh/hierarchy-weights applies to the queue at that level's prefix;
// the last one is the queue's own weight and wins over spec.weight.
Status ParseVolcanoQueue(const Reporter& rep, const MapView& obj, const ResourceScope& scope,
                         QueueTable* table) {
  std::string name;
  int name_line = obj.line();
  // Copies: the annotation map's view does not outlive its block.
  std::optional<Field> hierarchy;
  std::optional<Field> weights;
  if (const Field* md = obj.Get("metadata")) {
    HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, md->value, md->line, "", "metadata"));
    if (const Field* n = m.Get("name")) {
      HDRF_ASSIGN_OR_RETURN(name, GetString(rep, *n, "", false));
      name_line = n->line;
    }
    if (const Field* a = m.Get("annotations"); a && !a->value.IsNull()) {
      HDRF_ASSIGN_OR_RETURN(MapView an, MapView::Make(rep, a->value, a->line, "", "annotations"));
      if (const Field* h = an.Get("volcano.sh/hierarchy")) hierarchy = *h;
      if (const Field* w = an.Get("volcano.sh/hierarchy-weights")) weights = *w;
    }
  }
  if (name.empty() && !hierarchy) {
    return rep.Error(obj.line(), "", "Queue has neither metadata.name nor a volcano.sh/hierarchy annotation");
  }
  const std::string ctx0 = name.empty() ? "Queue" : "Queue " + name;

  std::string path;
  std::vector<std::string> levels;
  std::vector<double> level_weights;
  if (hierarchy) {
    HDRF_ASSIGN_OR_RETURN(path, GetString(rep, *hierarchy, ctx0, false));
    if (!ValidPath(path)) {
      return rep.Error(hierarchy->line, ctx0,
                       "volcano.sh/hierarchy '" + path +
                           "' must be 'root' or start with 'root/' and have non-empty names");
    }
    levels = SplitSlash(path);
    if (weights) {
      HDRF_ASSIGN_OR_RETURN(std::string ws, GetString(rep, *weights, ctx0, false));
      std::vector<std::string> parts = SplitSlash(ws);
      if (parts.size() != levels.size()) {
        return rep.Error(weights->line, ctx0,
                         "volcano.sh/hierarchy-weights '" + ws + "' has " +
                             std::to_string(parts.size()) + " weights for the " +
                             std::to_string(levels.size()) + " levels of '" + path + "'");
      }
      for (const std::string& p : parts) {
        std::optional<double> v = ToDouble(p);
        if (!v || !std::isfinite(*v)) {
          return rep.Error(weights->line, ctx0,
                           "volcano.sh/hierarchy-weights '" + ws + "': weight '" + p +
                               "' is not a finite number");
        }
        level_weights.push_back(*v);
      }
    }
  } else {
    if (!ValidName(name)) {
      return rep.Error(name_line, ctx0, "queue name '" + name + "' must not contain '/' or blanks");
    }
    path = name == "root" ? "root" : "root/" + name;
  }
  const std::string ctx = QueueCtx(path);

  // Implicit parents (every proper prefix) get their level's weight.
  std::string prefix;
  for (size_t i = 0; i + 1 < levels.size(); ++i) {
    prefix += (i == 0 ? "" : "/") + levels[i];
    std::optional<double> w;
    if (!level_weights.empty()) w = level_weights[i];
    HDRF_RETURN_IF_ERROR(table->AddImplicit(prefix, w, weights ? weights->line : hierarchy->line));
  }

  QueueSpec q;
  q.path = path;
  q.line = obj.line();
  std::optional<double> weight;
  int weight_line = obj.line();
  if (const Field* spec = obj.Get("spec"); spec && !spec->value.IsNull()) {
    HDRF_ASSIGN_OR_RETURN(MapView s, MapView::Make(rep, spec->value, spec->line, ctx, "spec"));
    for (const Field& f : s.fields()) {
      bool handled = false;
      HDRF_RETURN_IF_ERROR(ApplyQueueField(rep, f, ctx, scope, /*volcano_wrap=*/true, &q,
                                           &weight, &handled));
      if (handled && f.key == "weight") weight_line = f.line;
      // Anything else under spec (deserved, extendClusters, ...) is ignored.
    }
  }
  if (!level_weights.empty()) {
    weight = level_weights.back();
    q.weight = *weight;
    weight_line = weights->line;
  }
  return table->AddExplicit(std::move(q), weight, weight_line);
}

// ---------------------------------------------------------------------------
// Form 2: a root Queue with spec.hierarchy.

Status ParseHierarchyList(const Reporter& rep, const Field& list, const std::string& parent,
                          const ResourceScope& scope, QueueTable* table, int depth);

// Applies a `parameters` list ([{name: weight, value: 5}, ...]) or map
// ({weight: 5, ...}) to `q`.
Status ApplyParameters(const Reporter& rep, const Field& params, const std::string& ctx,
                       const ResourceScope& scope, QueueSpec* q, std::optional<double>* weight,
                       int* weight_line) {
  std::vector<Field> fields;
  if (params.value.IsNull()) return Status::Ok();
  if (params.value.IsMap()) {
    HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, params.value, params.line, ctx, "parameters"));
    fields = m.fields();
  } else if (params.value.IsSequence()) {
    std::map<std::string, int> seen;
    for (const YAML::Node& p : params.value) {
      HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, p, params.line, ctx, "a parameter"));
      HDRF_RETURN_IF_ERROR(m.CheckKeys(rep, ctx, "a parameter", {"name", "value"}));
      const Field* n = m.Get("name");
      const Field* v = m.Get("value");
      if (n == nullptr || v == nullptr) {
        return rep.Error(m.line(), ctx, "a parameter needs both 'name' and 'value'");
      }
      HDRF_ASSIGN_OR_RETURN(std::string name, GetString(rep, *n, ctx, false));
      auto [pos, inserted] = seen.emplace(name, m.line());
      if (!inserted) {
        return rep.Error(m.line(), ctx,
                         "duplicate parameter '" + name + "' (first at line " +
                             std::to_string(pos->second) + ")");
      }
      fields.push_back(Field{name, v->line, v->value, v->value_line});
    }
  } else {
    return rep.Error(params.ValueLine(), ctx,
                     "parameters must be a list of {name, value}, got " + Describe(params.value));
  }
  for (const Field& f : fields) {
    bool handled = false;
    HDRF_RETURN_IF_ERROR(ApplyQueueField(rep, f, ctx, scope, /*volcano_wrap=*/true, q, weight,
                                         &handled));
    if (!handled) {
      return rep.Error(f.line, ctx,
                       "unknown parameter '" + f.key + "' (expected " +
                           JoinNames({HDRF_QUEUE_FIELDS}) + ")");
    }
    if (f.key == "weight") *weight_line = f.line;
  }
  return Status::Ok();
}

// One node of spec.hierarchy: {name, parameters, children | hierarchy}.
// `parent` is empty for a node that describes root itself.
Status ParseHierarchyNode(const Reporter& rep, const YAML::Node& node, int fallback_line,
                          const std::string& parent, const ResourceScope& scope,
                          QueueTable* table, int depth) {
  if (depth > 64) return rep.Error(fallback_line, "", "queue hierarchy nested too deeply");
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, node, fallback_line, "", "a hierarchy entry"));
  HDRF_RETURN_IF_ERROR(m.CheckKeys(rep, "", "a hierarchy entry",
                                   {"name", "parameters", "children", "hierarchy"}));
  std::string path;
  const Field* n = m.Get("name");
  if (parent.empty()) {
    if (n != nullptr) {
      HDRF_ASSIGN_OR_RETURN(std::string name, GetString(rep, *n, "", false));
      if (name != "root") {
        return rep.Error(n->line, "", "the top of spec.hierarchy must be named root, got '" + name + "'");
      }
    }
    path = "root";
  } else {
    if (n == nullptr) return rep.Error(m.line(), "", "hierarchy entry under " + parent + " has no name");
    HDRF_ASSIGN_OR_RETURN(std::string name, GetString(rep, *n, "", false));
    if (!ValidName(name)) {
      return rep.Error(n->line, "", "queue name '" + name + "' under " + parent +
                                        " must not contain '/' or blanks");
    }
    path = parent + "/" + name;
  }
  const std::string ctx = QueueCtx(path);
  QueueSpec q;
  q.path = path;
  q.line = m.line();
  std::optional<double> weight;
  int weight_line = q.line;
  if (const Field* p = m.Get("parameters")) {
    HDRF_RETURN_IF_ERROR(ApplyParameters(rep, *p, ctx, scope, &q, &weight, &weight_line));
  }
  HDRF_RETURN_IF_ERROR(table->AddExplicit(std::move(q), weight, weight_line));
  const Field* children = m.Get("children");
  const Field* nested = m.Get("hierarchy");
  if (children != nullptr && nested != nullptr) {
    return rep.Error(nested->line, ctx, "give either 'children' or 'hierarchy', not both");
  }
  if (children == nullptr) children = nested;
  if (children != nullptr) {
    HDRF_RETURN_IF_ERROR(ParseHierarchyList(rep, *children, path, scope, table, depth + 1));
  }
  return Status::Ok();
}

Status ParseHierarchyList(const Reporter& rep, const Field& list, const std::string& parent,
                          const ResourceScope& scope, QueueTable* table, int depth) {
  if (list.value.IsNull()) return Status::Ok();
  if (!list.value.IsSequence()) {
    return rep.Error(list.ValueLine(), QueueCtx(parent),
                     list.key + " must be a list of queues, got " + Describe(list.value));
  }
  for (const YAML::Node& child : list.value) {
    HDRF_RETURN_IF_ERROR(ParseHierarchyNode(rep, child, list.line, parent, scope, table, depth));
  }
  return Status::Ok();
}

// The root Queue object. Its own spec fields (weight, capability, guarantee,
// reclaimable, state, ...) apply to root; spec.hierarchy is either the list of
// root's children or a single node describing root (name: root).
Status ParseNestedRoot(const Reporter& rep, const MapView& obj, const ResourceScope& scope,
                       QueueTable* table) {
  if (const Field* md = obj.Get("metadata")) {
    HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, md->value, md->line, "", "metadata"));
    if (const Field* n = m.Get("name")) {
      HDRF_ASSIGN_OR_RETURN(std::string name, GetString(rep, *n, "", false));
      if (name != "root") {
        return rep.Error(n->line, "", "a Queue with spec.hierarchy must be named root, got '" +
                                          name + "'");
      }
    }
  }
  const Field* spec = obj.Get("spec");
  HDRF_ASSIGN_OR_RETURN(MapView s, MapView::Make(rep, spec->value, spec->line, "queue root", "spec"));
  const Field* hierarchy = s.Get("hierarchy");
  QueueSpec root;
  root.path = "root";
  root.line = obj.line();
  std::optional<double> weight;
  int weight_line = root.line;
  const Field* own = nullptr;  // first spec field that sets a root parameter
  for (const Field& f : s.fields()) {
    bool handled = false;
    HDRF_RETURN_IF_ERROR(ApplyQueueField(rep, f, "queue root", scope, true, &root, &weight, &handled));
    if (handled && own == nullptr) own = &f;
    if (handled && f.key == "weight") weight_line = f.line;
  }
  if (hierarchy->value.IsMap()) {
    // A single node describing root: its parameters say everything.
    if (own != nullptr) {
      return rep.Error(own->line, "queue root",
                       "set root's " + own->key +
                           " in the parameters of spec.hierarchy, not beside it");
    }
    return ParseHierarchyNode(rep, hierarchy->value, hierarchy->line, "", scope, table, 0);
  }
  HDRF_RETURN_IF_ERROR(table->AddExplicit(std::move(root), weight, weight_line));
  return ParseHierarchyList(rep, *hierarchy, "root", scope, table, 1);
}

// ---------------------------------------------------------------------------
// Form 3: kind: HierarchicalQueue with a flat spec.queues list.

struct FlatQueue {
  std::string name;
  std::string parent;     // "" = root
  int line = 0;
  int parent_line = 0;
  QueueSpec spec;
  std::optional<double> weight;
  int weight_line = 0;
  // Resolution state.
  enum { kNew, kVisiting, kDone } state = kNew;
};

Status ParseHierarchicalQueue(const Reporter& rep, const MapView& obj, const ResourceScope& scope,
                              QueueTable* table) {
  const Field* spec = obj.Get("spec");
  if (spec == nullptr) return rep.Error(obj.line(), "", "HierarchicalQueue has no spec");
  HDRF_ASSIGN_OR_RETURN(MapView s, MapView::Make(rep, spec->value, spec->line, "", "spec"));
  const Field* list = s.Get("queues");
  if (list == nullptr) return rep.Error(s.line(), "", "HierarchicalQueue has no spec.queues");
  if (!list->value.IsSequence()) {
    return rep.Error(list->ValueLine(), "", "spec.queues must be a list, got " + Describe(list->value));
  }
  std::vector<FlatQueue> qs;
  for (const YAML::Node& e : list->value) {
    HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, e, list->line, "", "a queue entry"));
    HDRF_RETURN_IF_ERROR(m.CheckKeys(rep, "", "a queue entry", {"name", "parent", HDRF_QUEUE_FIELDS}));
    FlatQueue fq;
    fq.line = m.line();
    const Field* n = m.Get("name");
    if (n == nullptr) return rep.Error(m.line(), "", "queue entry has no name");
    HDRF_ASSIGN_OR_RETURN(fq.name, GetString(rep, *n, "", false));
    if (!ValidName(fq.name)) {
      return rep.Error(n->line, "", "queue name '" + fq.name + "' must not contain '/' or blanks");
    }
    const std::string ctx = "queue " + fq.name;
    if (const Field* p = m.Get("parent")) {
      HDRF_ASSIGN_OR_RETURN(fq.parent, GetString(rep, *p, ctx, true));
      fq.parent_line = p->line;
    }
    if (fq.name == "root" && !fq.parent.empty()) {
      return rep.Error(fq.parent_line, ctx, "root cannot have a parent");
    }
    fq.weight_line = fq.line;
    for (const Field& f : m.fields()) {
      bool handled = false;
      HDRF_RETURN_IF_ERROR(ApplyQueueField(rep, f, ctx, scope, true, &fq.spec, &fq.weight, &handled));
      if (f.key == "weight") fq.weight_line = f.line;
    }
    qs.push_back(std::move(fq));
  }

  // Resolve parents: a path ("root/eng") is taken as is and checked once all
  // paths are known; a plain name must match exactly one listed queue.
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < qs.size(); ++i) by_name[qs[i].name].push_back(i);

  std::vector<std::string> paths(qs.size());
  // Iterative depth-first resolution with cycle detection.
  for (size_t start = 0; start < qs.size(); ++start) {
    std::vector<size_t> stack{start};
    while (!stack.empty()) {
      size_t i = stack.back();
      FlatQueue& q = qs[i];
      if (q.state == FlatQueue::kDone) {
        stack.pop_back();
        continue;
      }
      const std::string ctx = "queue " + q.name;
      const std::string& p = q.parent;
      if (q.name == "root") {
        paths[i] = "root";
      } else if (p.empty() || p == "root") {
        paths[i] = "root/" + q.name;
      } else if (p.find('/') != std::string::npos) {
        if (!ValidPath(p)) {
          return rep.Error(q.parent_line, ctx,
                           "parent '" + p + "' must be 'root', a path starting with 'root/' or the name of a listed queue");
        }
        paths[i] = p + "/" + q.name;
      } else {
        auto it = by_name.find(p);
        if (it == by_name.end()) {
          return rep.Error(q.parent_line, ctx, "unknown parent '" + p + "'");
        }
        if (it->second.size() > 1) {
          return rep.Error(q.parent_line, ctx,
                           "parent '" + p + "' is ambiguous: queues at lines " +
                               std::to_string(qs[it->second[0]].line) + " and " +
                               std::to_string(qs[it->second[1]].line) +
                               " have that name; give its path");
        }
        size_t j = it->second[0];
        if (qs[j].state != FlatQueue::kDone) {
          if (qs[j].state == FlatQueue::kVisiting) {
            return rep.Error(q.parent_line, ctx, "cycle in parents involving queue '" + p + "'");
          }
          q.state = FlatQueue::kVisiting;
          stack.push_back(j);
          continue;
        }
        paths[i] = paths[j] + "/" + q.name;
      }
      q.state = FlatQueue::kDone;
      stack.pop_back();
    }
  }
  std::set<std::string> known(paths.begin(), paths.end());
  known.insert("root");
  for (size_t i = 0; i < qs.size(); ++i) {
    const std::string& p = qs[i].parent;
    if (p.find('/') != std::string::npos && !known.count(p)) {
      return rep.Error(qs[i].parent_line, "queue " + qs[i].name,
                       "unknown parent '" + p + "' (no listed queue has that path)");
    }
  }
  for (size_t i = 0; i < qs.size(); ++i) {
    QueueSpec spec = std::move(qs[i].spec);
    spec.path = paths[i];
    spec.line = qs[i].line;
    HDRF_RETURN_IF_ERROR(table->AddExplicit(std::move(spec), qs[i].weight, qs[i].weight_line));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Form 4: scenarios.

StatusOr<QueueSpec> ParseScenarioQueue(const Reporter& rep, const YAML::Node& node, int fallback,
                                       const ResourceScope& scope) {
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, node, fallback, "", "a queue entry"));
  QueueSpec q;
  q.line = m.line();
  const Field* p = m.Get("path");
  if (p == nullptr) return rep.Error(m.line(), "", "queue entry has no path");
  HDRF_ASSIGN_OR_RETURN(q.path, GetPath(rep, *p, "queue"));
  const std::string ctx = QueueCtx(q.path);
  HDRF_RETURN_IF_ERROR(m.CheckKeys(rep, ctx, "a queue entry", {"path", HDRF_QUEUE_FIELDS}));
  std::optional<double> weight;
  for (const Field& f : m.fields()) {
    bool handled = false;
    HDRF_RETURN_IF_ERROR(ApplyQueueField(rep, f, ctx, scope, false, &q, &weight, &handled));
  }
  return q;
}

StatusOr<JobSpec> ParseJob(const Reporter& rep, const YAML::Node& node, int fallback,
                           const ResourceScope& scope, const std::string& what) {
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, node, fallback, "", what));
  JobSpec j;
  j.line = m.line();
  const Field* n = m.Get("name");
  if (n == nullptr) return rep.Error(m.line(), "", what + " has no name");
  HDRF_ASSIGN_OR_RETURN(j.name, GetString(rep, *n, "job", false));
  const std::string ctx = "job " + j.name;
  HDRF_RETURN_IF_ERROR(m.CheckKeys(rep, ctx, what,
                                   {"name", "queue", "user", "tasks", "task", "weight",
                                    "minAvailable"}));
  for (const Field& f : m.fields()) {
    if (f.key == "queue") {
      HDRF_ASSIGN_OR_RETURN(j.queue, GetString(rep, f, ctx, true));
      if (!j.queue.empty() && !ValidPath(j.queue)) {
        return rep.Error(f.ValueLine(), ctx,
                         "queue '" + j.queue + "' must be a path starting with 'root'");
      }
    } else if (f.key == "user") {
      HDRF_ASSIGN_OR_RETURN(j.user, GetString(rep, f, ctx, false));
    } else if (f.key == "tasks") {
      HDRF_ASSIGN_OR_RETURN(j.tasks, GetInt(rep, f, ctx, 0, std::numeric_limits<int64_t>::max(),
                                            "a non-negative integer"));
    } else if (f.key == "task") {
      HDRF_ASSIGN_OR_RETURN(j.task, GetResources(rep, f, ctx, scope, false));
    } else if (f.key == "weight") {
      HDRF_ASSIGN_OR_RETURN(j.weight, GetNumber(rep, f, ctx));
    } else if (f.key == "minAvailable") {
      HDRF_ASSIGN_OR_RETURN(j.min_available,
                            GetInt(rep, f, ctx, 0, std::numeric_limits<int64_t>::max(),
                                   "a non-negative integer"));
    }
  }
  return j;
}

StatusOr<ScenarioStep> ParseStep(const Reporter& rep, const YAML::Node& node, int fallback,
                                 size_t index, const ResourceScope& scope) {
  const std::string ctx = "step " + std::to_string(index);
  const char* kExpected = "expected fill, or a map with one key finish, remove or submit";
  ScenarioStep step;
  step.line = rep.LineOf(node, fallback);
  if (node.IsScalar()) {
    if (node.Scalar() == "fill") return step;
    return rep.Error(step.line, ctx, "unknown step '" + node.Scalar() + "' (" + kExpected + ")");
  }
  if (!node.IsMap()) {
    return rep.Error(step.line, ctx, "a step must be fill or a map, got " + Describe(node) +
                                         " (" + kExpected + ")");
  }
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, node, fallback, ctx, "a step"));
  if (m.fields().size() != 1) {
    return rep.Error(m.line(), ctx,
                     "a step map has exactly one key, got " + std::to_string(m.fields().size()) +
                         " (" + kExpected + ")");
  }
  const Field& f = m.fields()[0];
  step.line = f.line;
  if (f.key == "finish" || f.key == "remove") {
    step.kind = f.key == "finish" ? ScenarioStep::Kind::kFinish : ScenarioStep::Kind::kRemove;
    HDRF_ASSIGN_OR_RETURN(MapView b, MapView::Make(rep, f.value, f.line, ctx, f.key));
    if (f.key == "finish") {
      HDRF_RETURN_IF_ERROR(b.CheckKeys(rep, ctx, "finish", {"job", "tasks"}));
    } else {
      HDRF_RETURN_IF_ERROR(b.CheckKeys(rep, ctx, "remove", {"job"}));
    }
    const Field* job = b.Get("job");
    if (job == nullptr) return rep.Error(b.line(), ctx, f.key + " needs a job");
    HDRF_ASSIGN_OR_RETURN(step.job, GetString(rep, *job, ctx, false));
    if (const Field* t = b.Get("tasks")) {
      HDRF_ASSIGN_OR_RETURN(step.tasks, GetInt(rep, *t, ctx, 1, std::numeric_limits<int64_t>::max(),
                                               "a positive integer"));
    }
    return step;
  }
  if (f.key == "submit") {
    step.kind = ScenarioStep::Kind::kSubmit;
    HDRF_ASSIGN_OR_RETURN(step.submit, ParseJob(rep, f.value, f.line, scope, "submit"));
    return step;
  }
  if (f.key == "fill") {
    return rep.Error(f.line, ctx, "fill takes no arguments: write '- fill'");
  }
  return rep.Error(f.line, ctx, "unknown step '" + f.key + "' (" + kExpected + ")");
}

StatusOr<Scenario> ParseScenarioDoc(const Reporter& rep, const MapView& top) {
  HDRF_RETURN_IF_ERROR(top.CheckKeys(rep, "", "a scenario",
                                     {"cluster", "queues", "jobs", "steps", "overcommitFactor"}));
  Scenario sc;
  const Field* cluster = top.Get("cluster");
  if (cluster == nullptr) {
    return rep.Error(top.line(), "", "scenario has no cluster (required key 'cluster')");
  }
  HDRF_ASSIGN_OR_RETURN(sc.cluster, GetCluster(rep, *cluster));
  const ResourceScope scope{&sc.cluster};

  if (const Field* qs = top.Get("queues"); qs && !qs->value.IsNull()) {
    if (!qs->value.IsSequence()) {
      return rep.Error(qs->ValueLine(), "", "queues must be a list, got " + Describe(qs->value));
    }
    std::map<std::string, int> seen;
    for (const YAML::Node& e : qs->value) {
      HDRF_ASSIGN_OR_RETURN(QueueSpec q, ParseScenarioQueue(rep, e, qs->line, scope));
      auto [pos, inserted] = seen.emplace(q.path, q.line);
      if (!inserted) {
        return rep.Error(q.line, "", "duplicate queue " + q.path + " (first defined at line " +
                                         std::to_string(pos->second) + ")");
      }
      sc.queues.push_back(std::move(q));
    }
  }
  if (const Field* js = top.Get("jobs"); js && !js->value.IsNull()) {
    if (!js->value.IsSequence()) {
      return rep.Error(js->ValueLine(), "", "jobs must be a list, got " + Describe(js->value));
    }
    std::map<std::string, int> seen;
    for (const YAML::Node& e : js->value) {
      HDRF_ASSIGN_OR_RETURN(JobSpec j, ParseJob(rep, e, js->line, scope, "a job entry"));
      auto [pos, inserted] = seen.emplace(j.name, j.line);
      if (!inserted) {
        return rep.Error(j.line, "", "duplicate job " + j.name + " (first defined at line " +
                                         std::to_string(pos->second) + ")");
      }
      sc.jobs.push_back(std::move(j));
    }
  }
  const Field* steps = top.Get("steps");
  if (steps == nullptr || steps->value.IsNull()) {
    ScenarioStep fill;
    fill.line = steps ? steps->line : 0;
    sc.steps.push_back(fill);
  } else {
    if (!steps->value.IsSequence()) {
      return rep.Error(steps->ValueLine(), "", "steps must be a list, got " + Describe(steps->value));
    }
    size_t index = 0;
    for (const YAML::Node& e : steps->value) {
      HDRF_ASSIGN_OR_RETURN(ScenarioStep s, ParseStep(rep, e, steps->line, ++index, scope));
      sc.steps.push_back(std::move(s));
    }
  }
  if (const Field* oc = top.Get("overcommitFactor"); oc && !oc->value.IsNull()) {
    HDRF_ASSIGN_OR_RETURN(double v, GetNumber(rep, *oc, ""));
    if (!(v > 0)) {
      return rep.Error(oc->ValueLine(), "",
                       "overcommitFactor must be a number above 0, got " + Describe(oc->value));
    }
    sc.overcommit_factor = v;
  }
  return sc;
}

// ---------------------------------------------------------------------------
// Documents and detection.

enum class DocKind { kScenario, kVolcanoQueue, kNestedRoot, kHierarchicalQueue, kCluster, kList };

const char* kScenarioKeys[] = {"cluster", "queues", "jobs", "steps", "overcommitFactor"};

StatusOr<DocKind> Detect(const Reporter& rep, const MapView& m) {
  if (const Field* k = m.Get("kind")) {
    HDRF_ASSIGN_OR_RETURN(std::string kind, GetString(rep, *k, "", false));
    if (kind == "Queue") {
      if (const Field* spec = m.Get("spec"); spec && spec->value.IsMap() && spec->value["hierarchy"]) {
        return DocKind::kNestedRoot;
      }
      return DocKind::kVolcanoQueue;
    }
    if (kind == "HierarchicalQueue") return DocKind::kHierarchicalQueue;
    if (kind == "Cluster") return DocKind::kCluster;
    if (kind == "List") return DocKind::kList;
    return rep.Error(k->ValueLine(), "",
                     "unknown kind '" + kind +
                         "' (expected Queue, HierarchicalQueue, Cluster or List, or a scenario "
                         "without kind)");
  }
  for (const char* key : kScenarioKeys) {
    if (m.Has(key)) return DocKind::kScenario;
  }
  return rep.Error(m.line(), "",
                   "cannot tell what this document is: expected a Volcano Queue (kind: Queue), "
                   "kind: HierarchicalQueue, kind: Cluster, or a scenario (cluster, queues, jobs, "
                   "steps)");
}

// ---------------------------------------------------------------------------
// Loading documents.
//
// yaml-cpp 0.7 is not used through YAML::LoadAll: it loops forever (and
// allocates without bound) on a document that starts with a token it cannot
// place, such as a ',' outside a flow collection (yaml-cpp issue #1040, fixed
// upstream after 0.8). YAML::Load, for its part, silently drops whatever
// follows the first document ("[1]\n[2]" loads as [1]). So the text is split
// into documents at the `---` / `...` markers (which YAML forbids inside
// content), each document is first run through the event parser to check
// that it holds exactly one document, and then loaded. Line numbers stay
// those of the whole text: each document's Reporter carries its offset.

struct Chunk {
  std::string text;
  int first_line = 0;  // 0-based line of the whole text where `text` starts
};

std::string_view StripEol(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

bool IsMarker(std::string_view line, std::string_view marker) {
  return line.substr(0, 3) == marker &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
}

// A line that holds no content: blank, a comment or a directive.
bool IsTrivia(std::string_view line) {
  const size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos) return true;
  return line[i] == '#' || (i == 0 && line[0] == '%');
}

std::vector<Chunk> SplitDocuments(std::string_view text) {
  std::vector<Chunk> out;
  Chunk cur;
  bool started = false;  // `cur` has a `---` marker or content
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view raw = text.substr(pos, end - pos);
    const std::string_view line = StripEol(raw);
    if (IsMarker(line, "---")) {
      if (started) {
        out.push_back(std::move(cur));
        cur = Chunk{};
        cur.first_line = line_no;
      }
      // Directives and comments before the marker stay with its document.
      started = true;
      cur.text += raw;
    } else if (IsMarker(line, "...")) {
      cur.text += raw;
      out.push_back(std::move(cur));
      cur = Chunk{};
      cur.first_line = line_no + 1;
      started = false;
    } else {
      cur.text += raw;
      started = started || !IsTrivia(line);
    }
    pos = end;
    ++line_no;
  }
  if (!cur.text.empty()) out.push_back(std::move(cur));
  return out;
}

// Records the mark of the first event of a document.
class FirstMark : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> mark;

  void OnDocumentStart(const YAML::Mark& m) override { Note(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { Note(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { Note(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Note(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Note(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Note(m);
  }
  void OnMapEnd() override {}

 private:
  void Note(const YAML::Mark& m) {
    if (!mark && !m.is_null()) mark = m;
  }
};

// A ParserException of a document starting at `first_line` (0-based).
Status MalformedYaml(const Reporter& rep, const YAML::Exception& e, int first_line) {
  const int line = e.mark.is_null() ? first_line + 1 : e.mark.line + 1 + first_line;
  return rep.Error(line, "", "malformed YAML: " + e.msg);
}

struct LoadedDoc {
  YAML::Node node;
  Reporter rep;  // knows the document's line offset
};

// The non-empty documents of `text`, each a map.
StatusOr<std::vector<LoadedDoc>> LoadDocs(const Reporter& rep, std::string_view text) {
  std::vector<LoadedDoc> out;
  for (const Chunk& c : SplitDocuments(text)) {
    const Reporter doc_rep = rep.ForDocument(c.first_line);
    YAML::Node node;
    try {
      std::istringstream in(c.text);
      YAML::Parser parser(in);
      FirstMark first, second;
      if (!parser.HandleNextDocument(first)) continue;  // comments only
      if (parser.HandleNextDocument(second)) {
        const int line = second.mark ? second.mark->line + 1 + c.first_line : c.first_line + 1;
        return rep.Error(line, "",
                         "malformed YAML: unexpected content here (it does not belong to the "
                         "document above; a document marker '---' missing?)");
      }
      node = YAML::Load(c.text);
    } catch (const YAML::Exception& e) {
      return MalformedYaml(rep, e, c.first_line);
    }
    if (node.IsNull()) continue;
    if (!node.IsMap()) {
      return rep.Error(doc_rep.LineOf(node, c.first_line + 1), "",
                       "a document must be a map, got " + Describe(node));
    }
    out.push_back(LoadedDoc{node, doc_rep});
  }
  if (out.empty()) return rep.Error(1, "", "no YAML document (the file is empty)");
  return out;
}

// ---------------------------------------------------------------------------
// Queue configurations and scenarios.

struct Doc {
  DocKind kind;
  MapView map;
  Reporter rep;
};

StatusOr<QueueConfig> ParseQueueConfigImpl(const Reporter& rep, std::string_view text) {
  HDRF_ASSIGN_OR_RETURN(std::vector<LoadedDoc> loaded, LoadDocs(rep, text));
  std::vector<Doc> docs;
  for (const LoadedDoc& ld : loaded) {
    const Reporter& drep = ld.rep;
    HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(drep, ld.node, 1, "", "a document"));
    HDRF_ASSIGN_OR_RETURN(DocKind kind, Detect(drep, m));
    if (kind == DocKind::kList) {
      const Field* items = m.Get("items");
      if (items == nullptr || items->value.IsNull()) continue;
      if (!items->value.IsSequence()) {
        return drep.Error(items->ValueLine(), "", "items must be a list, got " + Describe(items->value));
      }
      for (const YAML::Node& item : items->value) {
        HDRF_ASSIGN_OR_RETURN(MapView im, MapView::Make(drep, item, items->line, "", "a List item"));
        HDRF_ASSIGN_OR_RETURN(DocKind ik, Detect(drep, im));
        if (ik != DocKind::kVolcanoQueue && ik != DocKind::kNestedRoot) {
          return drep.Error(im.line(), "", "List items must be Queue objects");
        }
        docs.push_back(Doc{ik, std::move(im), drep});
      }
      continue;
    }
    docs.push_back(Doc{kind, std::move(m), drep});
  }

  for (const Doc& d : docs) {
    if (d.kind != DocKind::kScenario) continue;
    if (docs.size() > 1) {
      const Doc& other = &d == &docs[0] ? docs[1] : docs[0];
      return rep.Error(other.map.line(), "",
                       "a scenario must be the only document of its file (scenario at line " +
                           std::to_string(d.map.line()) + ")");
    }
    HDRF_ASSIGN_OR_RETURN(Scenario sc, ParseScenarioDoc(d.rep, d.map));
    QueueConfig cfg;
    cfg.cluster = std::move(sc.cluster);
    cfg.queues = std::move(sc.queues);
    return cfg;
  }

  // Pass 1: the cluster, from a kind: Cluster document or a top-level
  // `cluster:` of a form 2/3 object. At most one.
  QueueConfig cfg;
  int cluster_line = 0;
  for (const Doc& d : docs) {
    const Field* f = nullptr;
    if (d.kind == DocKind::kCluster) {
      HDRF_RETURN_IF_ERROR(d.map.CheckKeys(d.rep, "", "a Cluster",
                                           {"apiVersion", "kind", "metadata", "capacity"}));
      f = d.map.Get("capacity");
      if (f == nullptr) return rep.Error(d.map.line(), "", "kind: Cluster needs a capacity map");
    } else if (d.kind == DocKind::kNestedRoot || d.kind == DocKind::kHierarchicalQueue) {
      f = d.map.Get("cluster");
    }
    if (f == nullptr) continue;
    if (cluster_line != 0) {
      return rep.Error(f->line, "", "a second cluster definition (the first is at line " +
                                        std::to_string(cluster_line) + ")");
    }
    HDRF_ASSIGN_OR_RETURN(cfg.cluster, GetCluster(d.rep, *f));
    cluster_line = f->line;
  }
  ResourceScope scope;
  if (cluster_line != 0) scope.cluster = &cfg.cluster;

  // Pass 2: the queues.
  QueueTable table(rep);
  for (const Doc& d : docs) {
    switch (d.kind) {
      case DocKind::kVolcanoQueue:
        HDRF_RETURN_IF_ERROR(ParseVolcanoQueue(d.rep, d.map, scope, &table));
        break;
      case DocKind::kNestedRoot:
        HDRF_RETURN_IF_ERROR(ParseNestedRoot(d.rep, d.map, scope, &table));
        break;
      case DocKind::kHierarchicalQueue:
        HDRF_RETURN_IF_ERROR(ParseHierarchicalQueue(d.rep, d.map, scope, &table));
        break;
      case DocKind::kCluster:
      case DocKind::kScenario:
      case DocKind::kList:
        break;
    }
  }
  cfg.queues = table.Take();
  return cfg;
}

StatusOr<Scenario> ParseScenarioImpl(const Reporter& rep, std::string_view text) {
  HDRF_ASSIGN_OR_RETURN(std::vector<LoadedDoc> loaded, LoadDocs(rep, text));
  if (loaded.size() > 1) {
    return rep.Error(loaded[1].rep.LineOf(loaded[1].node, 1), "",
                     "a scenario file holds exactly one YAML document");
  }
  const Reporter& drep = loaded[0].rep;
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(drep, loaded[0].node, 1, "", "a scenario"));
  if (const Field* k = m.Get("kind")) {
    return drep.Error(k->line, "",
                      "not a scenario (it has kind: " + Describe(k->value) +
                          "); a scenario has the keys cluster, queues, jobs, steps, "
                          "overcommitFactor");
  }
  return ParseScenarioDoc(drep, m);
}

// Runs `fn` and turns any exception into a status: yaml-cpp reports
// malformed input by throwing.
template <typename T, typename Fn>
StatusOr<T> Guard(const Reporter& rep, Fn fn) {
  try {
    return fn();
  } catch (const YAML::Exception& e) {
    // LoadDocs catches parse errors itself, with the right line; this is a
    // last resort (the line may then be relative to a later document).
    return rep.Error(e.mark.is_null() ? 1 : e.mark.line + 1, "", "YAML error: " + e.msg);
  } catch (const std::exception& e) {
    return Status::Internal(rep.source() + ":1: unexpected error: " + e.what());
  }
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
  }
  std::string out;
  char buf[1 << 16];
  while (true) {
    size_t n = std::fread(buf, 1, sizeof(buf), f);
    out.append(buf, n);
    if (n < sizeof(buf)) break;
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) return Status::IoError("cannot read " + path + ": " + std::strerror(err));
  return out;
}

}  // namespace

StatusOr<QueueConfig> ParseQueueConfig(std::string_view yaml_text,
                                       const std::string& source_name) {
  const Reporter rep(source_name);
  return Guard<QueueConfig>(rep, [&] { return ParseQueueConfigImpl(rep, yaml_text); });
}

StatusOr<QueueConfig> LoadQueueConfigFile(const std::string& path) {
  HDRF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseQueueConfig(text, path);
}

StatusOr<Scenario> ParseScenario(std::string_view yaml_text, const std::string& source_name) {
  const Reporter rep(source_name);
  return Guard<Scenario>(rep, [&] { return ParseScenarioImpl(rep, yaml_text); });
}

StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  HDRF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseScenario(text, path);
}

#undef HDRF_QUEUE_FIELDS

}  // namespace hdrf
