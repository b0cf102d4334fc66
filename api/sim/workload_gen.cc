#include "api/sim/workload_gen.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace hdrf {
namespace {

Status Bad(const std::string& what) { return Status::InvalidArgument(what); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

StatusOr<double> Number(std::string_view text, const std::string& what) {
  const std::string t(Trim(text));
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v))
    return Bad(what + ": '" + t + "' is not a number");
  return v;
}

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Milliseconds as seconds with 3 decimals.
void AppendMs(std::string& out, int64_t ms) {
  AppendInt(out, ms / 1000);
  const int64_t f = ms % 1000;
  out.push_back('.');
  out.push_back(static_cast<char>('0' + f / 100));
  out.push_back(static_cast<char>('0' + f / 10 % 10));
  out.push_back(static_cast<char>('0' + f % 10));
}

std::vector<WorkloadGenOptions::Shape> DefaultShapes() {
  const int64_t gi = int64_t{1} << 30;
  return {{{{"cpu", 1000}, {"memory", 2 * gi}}, 6},
          {{{"cpu", 4000}, {"memory", 16 * gi}}, 3},
          {{{"cpu", 8000}, {"memory", 64 * gi}, {"nvidia.com/gpu", 1000}}, 1}};
}

Status CheckDistribution(const Distribution& d, const std::string& what) {
  using K = Distribution::Kind;
  const bool ok = (d.kind == K::kFixed && d.a > 0) || (d.kind == K::kExp && d.a > 0) ||
                  (d.kind == K::kUniform && d.a >= 0 && d.b >= d.a && d.b > 0) ||
                  (d.kind == K::kLognormal && d.b >= 0) ||
                  (d.kind == K::kPareto && d.a > 0 && d.b > 0);
  return ok ? Status::Ok() : Bad(what + ": parameters out of range in " + d.ToString());
}

Status Check(const WorkloadGenOptions& o) {
  if (o.jobs < 1) return Bad("jobs: must be at least 1");
  if (!(o.rate > 0)) return Bad("rate: must be > 0");
  if (!(o.burst_gap > 0)) return Bad("burst gap: must be > 0");
  if (!(o.burst_spread >= 0)) return Bad("burst spread: must be >= 0");
  HDRF_RETURN_IF_ERROR(CheckDistribution(o.burst_size, "burst size"));
  HDRF_RETURN_IF_ERROR(CheckDistribution(o.tasks, "tasks"));
  HDRF_RETURN_IF_ERROR(CheckDistribution(o.duration, "duration"));
  if (o.max_tasks < 1) return Bad("max tasks: must be at least 1");
  if (!(o.max_duration >= 0.001)) return Bad("max duration: must be at least 0.001");
  if (o.queues < 1 || o.queues > 1000000) return Bad("queues: must be in [1, 1000000]");
  if (o.fanout < 2) return Bad("fanout: must be at least 2");
  if (!(o.queue_skew >= 0)) return Bad("queue skew: must be >= 0");
  if (o.max_weight < 1) return Bad("max weight: must be at least 1");
  if (o.users < 1) return Bad("users: must be at least 1");
  for (const auto& s : o.shapes) {
    if (!(s.weight > 0)) return Bad("shape: weight must be > 0");
    if (s.task.empty()) return Bad("shape: no resource");
  }
  return Status::Ok();
}

int Depth(const WorkloadGenOptions& o) {
  int d = 1;
  for (int64_t n = o.fanout; n < o.queues; n *= o.fanout) ++d;
  return d;
}

// Path of leaf i: root/q<a>/q<a>-<b>/...
std::string LeafPath(int64_t i, int depth, int fanout) {
  std::vector<int64_t> digits(depth);
  for (int k = depth - 1; k >= 0; --k, i /= fanout) digits[k] = i % fanout;
  std::string path = "root", name = "q";
  for (int k = 0; k < depth; ++k) {
    if (k) name += "-";
    name += std::to_string(digits[k]);
    path += "/" + name;
  }
  return path;
}

// Index of the first cumulative weight above u·total.
size_t PickWeighted(const std::vector<double>& cum, double u) {
  const double x = u * cum.back();
  return std::min(cum.size() - 1, static_cast<size_t>(std::upper_bound(cum.begin(), cum.end(), x) - cum.begin()));
}

// The next arrival (ms) of the burst process.
struct Bursts {
  double start = 0;
  std::vector<int64_t> pending;  // arrivals of the current burst, descending
  int64_t Next(const WorkloadGenOptions& o, sim::GenRng& rng) {
    if (pending.empty()) {
      start += -std::log(rng.Open01()) * o.burst_gap;
      const int64_t n = std::max<int64_t>(1, std::llround(sim::Sample(o.burst_size, rng)));
      for (int64_t k = 0; k < n; ++k) {
        const double off = o.burst_spread > 0 ? -std::log(rng.Open01()) * o.burst_spread : 0;
        pending.push_back(std::llround((start + off) * 1000));
      }
      std::sort(pending.rbegin(), pending.rend());
    }
    const int64_t t = pending.back();
    pending.pop_back();
    return t;
  }
};

// Rounds a cluster amount up to whole units (cores, GiB, devices).
int64_t RoundUp(const std::string& r, double v) {
  const double unit = UnitOf(r) == ResourceUnit::kBytes ? double(int64_t{1} << 30) : 1000.0;
  return static_cast<int64_t>(std::ceil(v / unit) * unit);
}

}  // namespace

namespace sim {

double Sample(const Distribution& d, GenRng& rng) {
  switch (d.kind) {
    case Distribution::Kind::kFixed: return d.a;
    case Distribution::Kind::kExp: return -std::log(rng.Open01()) * d.a;
    case Distribution::Kind::kUniform: return d.a + (d.b - d.a) * rng.Open01();
    case Distribution::Kind::kLognormal: return std::exp(d.a + d.b * rng.Normal());
    case Distribution::Kind::kPareto: return d.b / std::pow(rng.Open01(), 1.0 / d.a);
  }
  return d.a;
}

}  // namespace sim

StatusOr<Distribution> Distribution::Parse(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string kind(Trim(text.substr(0, colon)));
  static const std::map<std::string, std::pair<Kind, int>> kinds = {
      {"fixed", {Kind::kFixed, 1}},         {"exp", {Kind::kExp, 1}},
      {"uniform", {Kind::kUniform, 2}},     {"lognormal", {Kind::kLognormal, 2}},
      {"pareto", {Kind::kPareto, 2}}};
  auto it = kinds.find(kind);
  if (it == kinds.end() || colon == std::string_view::npos)
    return Bad("distribution '" + std::string(text) +
               "': expected fixed:V, exp:MEAN, uniform:LO,HI, lognormal:MU,SIGMA or pareto:ALPHA,XMIN");
  std::string_view args = text.substr(colon + 1);
  std::vector<std::string_view> parts;
  for (size_t c; (c = args.find(',')) != std::string_view::npos; args.remove_prefix(c + 1))
    parts.push_back(args.substr(0, c));
  parts.push_back(args);
  if (static_cast<int>(parts.size()) != it->second.second)
    return Bad("distribution '" + std::string(text) + "': " + kind + " takes " +
               std::to_string(it->second.second) + " parameter(s)");
  Distribution d;
  d.kind = it->second.first;
  HDRF_ASSIGN_OR_RETURN(d.a, Number(parts[0], "distribution '" + std::string(text) + "'"));
  if (parts.size() > 1) {
    HDRF_ASSIGN_OR_RETURN(d.b, Number(parts[1], "distribution '" + std::string(text) + "'"));
  }
  HDRF_RETURN_IF_ERROR(CheckDistribution(d, "distribution"));
  return d;
}

std::string Distribution::ToString() const {
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  switch (kind) {
    case Kind::kFixed: return "fixed:" + num(a);
    case Kind::kExp: return "exp:" + num(a);
    case Kind::kUniform: return "uniform:" + num(a) + "," + num(b);
    case Kind::kLognormal: return "lognormal:" + num(a) + "," + num(b);
    case Kind::kPareto: return "pareto:" + num(a) + "," + num(b);
  }
  return "?";
}

StatusOr<WorkloadGenOptions::Shape> ParseWorkloadShape(std::string_view text) {
  WorkloadGenOptions::Shape s;
  std::string_view list = text;
  if (const size_t at = text.rfind('@'); at != std::string_view::npos) {
    HDRF_ASSIGN_OR_RETURN(s.weight, Number(text.substr(at + 1), "shape '" + std::string(text) + "' weight"));
    if (!(s.weight > 0)) return Bad("shape '" + std::string(text) + "': weight must be > 0");
    list = text.substr(0, at);
  }
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = Trim(list.substr(0, comma));
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return Bad("shape '" + std::string(text) + "': '" + std::string(item) + "' is not resource=quantity");
    const std::string r(Trim(item.substr(0, eq)));
    if (!IsKnownResourceName(r)) return Bad("shape '" + std::string(text) + "': unknown resource '" + r + "'");
    auto q = ParseQuantity(r, Trim(item.substr(eq + 1)));
    if (!q.ok()) return Bad("shape '" + std::string(text) + "': " + r + ": " + q.status().message());
    if (*q > 0) s.task[r] = *q;
  }
  if (s.task.empty()) return Bad("shape '" + std::string(text) + "': no resource with an amount");
  return s;
}

std::vector<QueueSpec> WorkloadQueues(const WorkloadGenOptions& o) {
  sim::GenRng rng(o.seed ^ 0x51ed270b9d4ee3c5ull);  // its own stream: jobs do not shift it
  const int depth = Depth(o);
  std::vector<QueueSpec> out;
  std::map<std::string, bool> seen;
  for (int64_t i = 0; i < o.queues; ++i) {
    const std::string leaf = LeafPath(i, depth, o.fanout);
    for (size_t slash = leaf.find('/', 5); ; slash = leaf.find('/', slash + 1)) {
      const std::string path = leaf.substr(0, slash);
      if (!seen[path]) {
        seen[path] = true;
        QueueSpec q;
        q.path = path;
        q.weight = static_cast<double>(1 + rng.Next() % static_cast<uint64_t>(o.max_weight));
        out.push_back(q);
      }
      if (slash == std::string::npos) break;
    }
  }
  return out;
}

std::string WorkloadConfigYaml(const WorkloadGenOptions& o, const ResourceAmounts& cluster) {
  std::string y = "# hdrf workload gen --seed " + std::to_string(o.seed) +
                  ": the queue tree (docs/spec.md §10 scenario form, no jobs)\ncluster: {";
  bool first = true;
  for (const auto& [r, v] : cluster) {
    y += std::string(first ? "" : ", ") + r + ": \"" + FormatQuantity(r, v) + "\"";
    first = false;
  }
  y += "}\nqueues:\n";
  for (const QueueSpec& q : WorkloadQueues(o))
    y += "  - {path: " + q.path + ", weight: " + std::to_string(static_cast<int64_t>(q.weight)) + "}\n";
  return y;
}

StatusOr<WorkloadGenSummary> GenerateWorkload(const WorkloadGenOptions& o, const ChunkSink& sink,
                                              double load) {
  HDRF_RETURN_IF_ERROR(Check(o));
  if (!(load > 0)) return Bad("load: must be > 0");
  const std::vector<WorkloadGenOptions::Shape> shapes = o.shapes.empty() ? DefaultShapes() : o.shapes;
  std::vector<std::string> res;  // resource columns, name order
  {
    ResourceAmounts all;
    for (const auto& s : shapes)
      for (const auto& [r, v] : s.task) all[r] = std::max(all[r], v);
    for (const auto& [r, v] : all) res.push_back(r);
  }
  std::vector<std::string> cells;  // per shape: ",q1,q2,..."
  std::vector<double> shape_cum;
  for (const auto& s : shapes) {
    std::string c;
    for (const auto& r : res) {
      c += ",";
      if (auto it = s.task.find(r); it != s.task.end()) c += FormatQuantity(r, it->second);
    }
    cells.push_back(c + "\n");
    shape_cum.push_back((shape_cum.empty() ? 0 : shape_cum.back()) + s.weight);
  }
  std::vector<std::string> leaves;
  std::vector<double> leaf_cum;
  for (int64_t i = 0; i < o.queues; ++i) {
    leaves.push_back(LeafPath(i, Depth(o), o.fanout) + ",");
    leaf_cum.push_back((leaf_cum.empty() ? 0 : leaf_cum.back()) + std::pow(double(i + 1), -o.queue_skew));
  }

  std::string buf = "name,queue,arrival,duration,user,tasks,weight";
  for (const auto& r : res) buf += "," + r;
  buf += "\n";
  buf.reserve((1 << 20) + 4096);
  sim::GenRng rng(o.seed);
  Bursts bursts;
  double t = 0;
  int64_t prev = 0;
  const int64_t max_ms = std::llround(o.max_duration * 1000);
  WorkloadGenSummary sum;
  std::vector<double> demand(res.size(), 0);  // Σ tasks·seconds·amount
  std::vector<int64_t> largest(res.size(), 0);
  double task_seconds = 0;
  for (uint64_t i = 0; i < o.jobs; ++i) {
    int64_t at;
    if (o.arrivals == WorkloadGenOptions::Arrivals::kPoisson) {
      t += -std::log(rng.Open01()) / o.rate;
      at = std::llround(t * 1000);
    } else {
      at = bursts.Next(o, rng);
    }
    at = std::max(at, prev);  // non-decreasing (a spread burst may overlap the next)
    prev = at;
    const size_t leaf = PickWeighted(leaf_cum, rng.Open01());
    const uint64_t user = rng.Next() % static_cast<uint64_t>(o.users);
    const int64_t tasks = std::clamp<int64_t>(std::llround(std::min(sim::Sample(o.tasks, rng), 1e15)), 1, o.max_tasks);
    const int64_t dur = std::clamp<int64_t>(std::llround(std::min(sim::Sample(o.duration, rng), 1e12) * 1000), 1, max_ms);
    const size_t shape = PickWeighted(shape_cum, rng.Open01());
    buf += 'j';
    AppendInt(buf, static_cast<int64_t>(i));
    buf += ',';
    buf += leaves[leaf];
    AppendMs(buf, at);
    buf += ',';
    AppendMs(buf, dur);
    buf += ",u";
    AppendInt(buf, static_cast<int64_t>(user));
    buf += ',';
    AppendInt(buf, tasks);
    buf += ",1";
    buf += cells[shape];
    if (buf.size() >= (1 << 20)) {
      HDRF_RETURN_IF_ERROR(sink(buf));
      buf.clear();
    }
    sum.tasks += static_cast<uint64_t>(tasks);
    task_seconds += static_cast<double>(tasks) * static_cast<double>(dur) / 1000;
    for (size_t r = 0; r < res.size(); ++r) {
      auto it = shapes[shape].task.find(res[r]);
      const int64_t amount = it == shapes[shape].task.end() ? 0 : it->second;
      demand[r] += static_cast<double>(tasks) * static_cast<double>(dur) / 1000 * static_cast<double>(amount);
      largest[r] = std::max(largest[r], amount);
    }
  }
  if (!buf.empty()) HDRF_RETURN_IF_ERROR(sink(buf));
  sum.jobs = o.jobs;
  sum.last_arrival_ms = prev;
  sum.mean_duration = task_seconds / static_cast<double>(sum.tasks);
  const double horizon = std::max(1.0, static_cast<double>(prev) / 1000);
  for (size_t r = 0; r < res.size(); ++r) {
    sum.offered[res[r]] = static_cast<int64_t>(demand[r] / horizon);
    sum.cluster[res[r]] = std::max({RoundUp(res[r], demand[r] / horizon / load),
                                    RoundUp(res[r], double(largest[r])), RoundUp(res[r], 1)});
  }
  return sum;
}

}  // namespace hdrf
