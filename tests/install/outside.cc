// An outside C++ program, built by tests/install/install_test.sh against an
// installed hdrf with only `pkg-config --cflags --libs hdrf`.
#include <hdrf/engine.h>
#include <hdrf/metrics.h>
#include <hdrf/version.h>

#include <cstdio>

int main() {
  auto engine = hdrf::Engine::Create({{"cpu", 4000}}, {{.path = "root/a"}});
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
    return 1;
  }
  hdrf::JobSpec spec;
  spec.name = "j";
  spec.queue = "root/a";
  spec.tasks = 8;
  spec.task = {{"cpu", 1000}};
  auto job = (*engine)->Submit(spec);
  auto steps = (*engine)->Fill();
  if (!job.ok() || !steps.ok() || !(*engine)->Release(*job, 1).ok()) return 1;
  const bool metrics = hdrf::MetricsText(**engine).find("hdrf_jobs 1\n") != std::string::npos;
  std::printf("c++: hdrf %s, %lld steps, digest %s\n", HDRF_VERSION_STRING,
              static_cast<long long>(*steps), (*engine)->DigestHex().c_str());
  return *steps == 4 && metrics ? 0 : 1;
}
