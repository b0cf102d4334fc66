// Queue configuration forms 1-3 (docs/spec.md §3, docs/config.md): Volcano Queue
// objects, a root Queue with spec.hierarchy, and kind: HierarchicalQueue.
#include <algorithm>
#include <set>

#include "api/config/yaml_fields.h"

namespace hdrf::config {
namespace {

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

}  // namespace

// ---------------------------------------------------------------------------
// Form 1: Volcano Queue objects.

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
  if (!name.empty()) HDRF_RETURN_IF_ERROR(NameAt(rep, name_line, CheckName(NameKind::kQueue, name)));
  const std::string ctx0 = name.empty() ? "Queue" : "Queue " + name;

  std::string path;
  std::vector<std::string> levels;
  std::vector<double> level_weights;
  if (hierarchy) {
    HDRF_ASSIGN_OR_RETURN(path, GetString(rep, *hierarchy, ctx0, false));
    HDRF_RETURN_IF_ERROR(NameAt(rep, hierarchy->line, CheckQueuePath(path).WithContext("volcano.sh/hierarchy")));
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
                          const ResourceScope& scope, QueueTable* table);

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
                          QueueTable* table) {
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
    HDRF_RETURN_IF_ERROR(NameAt(rep, n->line, CheckName(NameKind::kQueue, name).WithContext("under " + parent)));
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
    HDRF_RETURN_IF_ERROR(ParseHierarchyList(rep, *children, path, scope, table));
  }
  return Status::Ok();
}

Status ParseHierarchyList(const Reporter& rep, const Field& list, const std::string& parent,
                          const ResourceScope& scope, QueueTable* table) {
  if (list.value.IsNull()) return Status::Ok();
  if (!list.value.IsSequence()) {
    return rep.Error(list.ValueLine(), QueueCtx(parent),
                     list.key + " must be a list of queues, got " + Describe(list.value));
  }
  for (const YAML::Node& child : list.value) {
    HDRF_RETURN_IF_ERROR(ParseHierarchyNode(rep, child, list.line, parent, scope, table));
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
    return ParseHierarchyNode(rep, hierarchy->value, hierarchy->line, "", scope, table);
  }
  HDRF_RETURN_IF_ERROR(table->AddExplicit(std::move(root), weight, weight_line));
  return ParseHierarchyList(rep, *hierarchy, "root", scope, table);
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
    HDRF_RETURN_IF_ERROR(NameAt(rep, n->line, CheckName(NameKind::kQueue, fq.name)));
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
        HDRF_RETURN_IF_ERROR(NameAt(rep, q.parent_line, CheckQueuePath(p).WithContext(ctx + ": parent")));
        paths[i] = p + "/" + q.name;
      } else {
        HDRF_RETURN_IF_ERROR(NameAt(rep, q.parent_line, CheckName(NameKind::kQueue, p).WithContext(ctx + ": parent")));
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


}  // namespace hdrf::config
