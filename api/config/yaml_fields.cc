// Shared readers of the configuration forms (yaml_fields.h).
#include "api/config/yaml_fields.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace hdrf::config {

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
    HDRF_RETURN_IF_ERROR(NameAt(rep, r.line, CheckName(NameKind::kResource, r.key)));
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

Status NameAt(const Reporter& rep, int line, const Status& checked) {
  return checked.ok() ? checked : rep.Error(line, "", checked.message());
}

StatusOr<std::string> GetPath(const Reporter& rep, const Field& f, const std::string& ctx) {
  HDRF_ASSIGN_OR_RETURN(std::string p, GetString(rep, f, ctx, false));
  HDRF_RETURN_IF_ERROR(NameAt(rep, f.ValueLine(), CheckQueuePath(p)));
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

}  // namespace hdrf::config
