// Outside C++ programs, one per installed library besides libhdrf.a, built
// by tests/install/install_test.sh against an installed hdrf with only that
// library's `pkg-config --cflags --libs hdrf_config` (-DUSE_CONFIG),
// `hdrf_formats` (-DUSE_FORMATS) or `hdrf_sim` (-DUSE_SIM): each .pc file
// must bring what its library calls (yaml-cpp; xxHash; the formats library
// the scenario runner's JSON comes from).
#include <hdrf/engine.h>

#include <cstdio>
#include <string>

#if defined(USE_CONFIG)
#include <hdrf/config.h>

int main() {
  auto cfg = hdrf::ParseQueueConfig(
      "kind: HierarchicalQueue\n"
      "metadata: {name: outside}\n"
      "spec:\n"
      "  queues:\n"
      "  - {name: a, weight: 2}\n"
      "  - {name: b}\n"
      "---\n"
      "kind: Cluster\n"
      "capacity: {cpu: '4'}\n",
      "outside.yaml");
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().ToString().c_str());
    return 1;
  }
  auto engine = hdrf::Engine::Create(cfg->cluster, cfg->queues);
  if (!engine.ok()) return 1;
  std::printf("config: %zu queues, digest %s\n", cfg->queues.size(), (*engine)->DigestHex().c_str());
  return cfg->queues.size() == 2 ? 0 : 1;
}

#elif defined(USE_FORMATS)
#include <hdrf/trace.h>

int main() {
  hdrf::TraceGenOptions o;
  o.jobs = 20;
  o.events = 200;
  auto trace = hdrf::GenerateTrace(o);
  if (!trace.ok()) return 1;
  auto bytes = hdrf::EncodeTrace(*trace);  // checksummed with xxHash
  if (!bytes.ok()) return 1;
  auto back = hdrf::DecodeTrace(bytes->data(), bytes->size());
  if (!back.ok()) {
    std::fprintf(stderr, "%s\n", back.status().ToString().c_str());
    return 1;
  }
  std::printf("formats: %zu events, %zu bytes, checksum %llx\n", back->events.size(), bytes->size(),
              static_cast<unsigned long long>(hdrf::TraceChecksum(bytes->data(), bytes->size())));
  return back->events.size() == trace->events.size() ? 0 : 1;
}

#elif defined(USE_SIM)
#include <hdrf/sim.h>

int main() {
  hdrf::Scenario sc;
  sc.cluster = {{"cpu", 4000}};
  sc.queues = {{.path = "root/a"}, {.path = "root/b"}};
  hdrf::JobSpec j;
  j.name = "j";
  j.queue = "root/a";
  j.tasks = 8;
  j.task = {{"cpu", 1000}};
  sc.jobs = {j};
  sc.steps = {hdrf::ScenarioStep{}};  // fill
  auto r = hdrf::RunScenario(sc);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return 1;
  }
  const std::string json = hdrf::SimResultToJson(*r);  // the formats library's JSON line
  std::printf("sim: %s\n", json.c_str());
  return json.find("\"digest\"") != std::string::npos ? 0 : 1;
}

#else
#error "build with -DUSE_CONFIG, -DUSE_FORMATS or -DUSE_SIM"
#endif
