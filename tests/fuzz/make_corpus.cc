// Writes the generated seeds of the fuzz targets (tests/fuzz/corpus):
// binary traces, store values (codec_fuzz: a selector byte, then the value)
// and C API programs (capi_fuzz's byte format). The YAML seeds are copies of
// tests/data. Run by hand after a format change:
//   build/fuzz/tests/fuzz/make_corpus tests/fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hdrf/trace.h"
#include "storage/codec.h"
#include "tests/fuzz/capi_dict.h"

namespace {

using namespace hdrf;
using namespace hdrf::storage;

std::filesystem::path g_root;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(g_root / target);
  std::ofstream out(g_root / target / name, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write %s/%s\n", target.c_str(), name.c_str());
    std::exit(1);
  }
}

template <typename T>
T Must(StatusOr<T> v) {
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*v);
}

void Traces() {
  TraceGenOptions o;
  o.jobs = 6;
  o.depth = 1;
  o.fanout = 2;
  o.events = 30;
  o.max_tasks = 4;
  Write("trace_fuzz", "gen_small.trace", Must(EncodeTrace(Must(GenerateTrace(o)))));
  o.saturate = true;
  o.depth = 2;
  o.seed = 7;
  Write("trace_fuzz", "gen_saturate.trace", Must(EncodeTrace(Must(GenerateTrace(o)))));
  o.events = 0;
  o.jobs = 1;
  Write("trace_fuzz", "gen_setup_only.trace", Must(EncodeTrace(Must(GenerateTrace(o)))));
}

void Codec() {
  const std::vector<std::string> names = {"cpu", "memory", "nvidia.com/gpu"};
  MetaRecord m;
  m.resource_names = names;
  m.initial_capacity = {10000, 64ll << 30, 8000};
  m.overcommit_factor = 1.5;
  m.created_by = "make_corpus";
  Write("codec_fuzz", "meta", std::string(1, '\0') + EncodeMeta(m));

  CheckpointHeaderRecord h;
  h.seq = 7;
  h.next_seq = 8;
  h.capacity = m.initial_capacity;
  QueueSpec root;
  root.path = "root";
  QueueSpec a;
  a.path = "root/a";
  a.weight = 2;
  a.capability = {{"cpu", 8000}};
  a.guarantee = {{"cpu", 2000}, {"memory", 1ll << 30}};
  QueueSpec x;
  x.path = "root/a/x";
  x.min_user_limit_percent = 50;
  x.user_limit_factor = 2;
  QueueSpec b;
  b.path = "root/b";
  b.reclaimable = false;
  b.state = QueueState::kClosing;
  h.queues = {root, a, x, b};
  h.job_count = 2;
  h.chunk_count = 1;
  Write("codec_fuzz", "header", std::string(1, '\1') + Must(EncodeCheckpointHeader(h, names)));

  JobChunkEncoder enc;
  JobFields j;
  const int64_t task1[] = {1000, 1ll << 30, 0}, task2[] = {0, 0, 1000};
  j.name = "j1";
  j.queue = 2;  // root/a/x
  j.user = "alice";
  j.tasks = 4;
  j.allocated = 2;
  j.min_available = 1;
  j.task = task1;
  j.seq = 3;
  j.state = JobState::kRunning;
  enc.Add(j, 3);
  j.name = "j2";
  j.queue = 3;  // root/b
  j.allocated = 0;
  j.weight = 3;
  j.min_available = 2;
  j.seq = 5;
  j.state = JobState::kPending;
  j.task = task2;
  enc.Add(j, 3);
  Write("codec_fuzz", "chunk", std::string(1, '\2') + enc.Finish(7, 0));

  EventBatch batch;
  batch.first_seq = 7;
  batch.Add(Event::Allocate(3, 2));
  batch.Add(Event::Release(3, 1));
  batch.Add(Event::Finish(3, 1));
  Event sub;
  sub.type = Event::Type::kSubmit;
  sub.job.name = "j3";
  sub.job.queue = "root/a";
  sub.job.task = {{"cpu", 500}, {"nvidia.com/gpu", 1000}};
  sub.job.tasks = 3;
  batch.Add(sub);
  Event cq;
  cq.type = Event::Type::kCreateQueue;
  cq.queue = x;
  cq.queue.path = "root/c";
  batch.Add(cq);
  Event st;
  st.type = Event::Type::kSetQueueState;
  st.path = "root/c";
  st.state = QueueState::kClosed;
  batch.Add(st);
  Event del;
  del.type = Event::Type::kDeleteQueue;
  del.path = "root/c";
  batch.Add(del);
  Event cap;
  cap.type = Event::Type::kSetCapacity;
  cap.cluster = {{"cpu", 20000}, {"memory", 1ll << 36}, {"nvidia.com/gpu", 4000}};
  batch.Add(cap);
  batch.Add(Event::Remove(3));
  LogEncoder le(names);
  std::string log;
  if (!le.Encode(batch, 0, batch.size(), &log).ok()) std::exit(1);
  Write("codec_fuzz", "log", std::string(1, '\3') + log);
  Write("codec_fuzz", "key_header", std::string(1, '\4') + HeaderKey(7));
  Write("codec_fuzz", "key_log", std::string(1, '\4') + LogKey(42));
  Write("codec_fuzz", "key_chunk", std::string(1, '\4') + ChunkKey(7, 3));
}

// capi_fuzz programs.
struct Prog {
  std::string b;
  Prog& Op(int op) { b += static_cast<char>(op); b += '\1'; return *this; }  // errptr set
  Prog& S(const std::string& s) {  // a dictionary string
    for (size_t i = 0; i < fuzz::kCapiDictSize; ++i)
      if (s == fuzz::kCapiDict[i]) { b += static_cast<char>(37 + i); return *this; }
    b += static_cast<char>(200);  // raw bytes
    b += static_cast<char>(s.size());
    b += s;
    return *this;
  }
  Prog& Null() { b += '\0'; return *this; }
  Prog& I(int v) { b += static_cast<char>(v + 2); return *this; }  // -2..9
  Prog& B(int v) { b += static_cast<char>(v); return *this; }
};

void Capi() {
  Prog p;
  // create "cpu=10,memory=64Gi" with root/a and root/b, into slot 0
  p.Op(0).S("cpu=10,memory=64Gi").B(2).S("root/a").B(0).S("root/b").B(0).B(0).B(0);
  p.Op(9).B(0).S("j1").S("root/a").S("alice").I(5).S("cpu=1");
  p.Op(9).B(0).S("j2").S("root/b").S("bob").I(4).S("cpu=500m,memory=512Mi");
  p.Op(9).B(0).S("j3").S("root").S("bob").I(2).S("memory=1Gi");
  p.Op(16).B(0).B(1);
  p.Op(22).B(0).B(3);
  p.Op(18).B(0).S("j1").B(4);
  p.Op(19).B(0).S("root/a").B(5);
  p.Op(13).B(0).S("j1").I(2);
  p.Op(12).B(0).S("j1").I(1);
  p.Op(14).B(0).S("j2").I(1);
  p.Op(15).B(0).B(3);
  p.Op(17).B(0).B(1);
  p.Op(20).B(0).B(18).B(1);
  p.Op(21).B(0).B(4);
  p.Op(11).B(0).S("j1");
  p.Op(6).B(0).S("root/b").I(2);
  p.Op(7).B(0).S("root/b");
  p.Op(8).B(0).S("cpu=8");
  p.Op(24).B(0);
  p.Op(12).B(0).S("j2").I(1);
  p.Op(3).B(0);
  p.Op(18).B(0).S("j2").B(4);
  p.Op(3).B(0);
  Write("capi_fuzz", "basic", p.b);

  Prog q;
  q.Op(0).S("cpu=1x").B(0).B(0).B(1);                         // wrong unit
  q.Op(0).S("cpu=4,memory=16Gi,nvidia.com/gpu=2").B(1).S("root/a/x").B(6).S("cpu=8").S("cpu=1").B(0).B(1);
  q.Op(25).S("cpu").S("500x").B(1);                           // wrong unit
  q.Op(25).S("memory").S("1.5").B(1);
  q.Op(12).B(3).S("j1").I(1);                                 // NULL engine
  q.Op(12).B(4).S("j1").I(1);                                 // not an engine
  q.Op(9).B(1).S("j1").S("root/a/x").Null().I(-1).S("gpu=1");  // unknown resource
  q.Op(9).B(1).S("j1").S("root/zz").Null().I(1).S("cpu=1");
  q.Op(10).B(1).S("j2").Null().Null().I(3).S("nvidia.com/gpu=1").B(0).I(9).B(1);
  q.Op(18).B(1).S("nope").B(0);
  q.Op(26).B(7).B(0).I(7).I(3);
  q.Op(22).B(4).B(3);
  q.Op(27).I(9).I(-1).I(4);
  Write("capi_fuzz", "errors", q.b);

  Prog c;
  const std::string yaml =
      "cluster:\n  cpu: 10\n  nvidia.com/gpu: 10\nqueues:\n  - path: root/sci\n    weight: 50\n"
      "jobs:\n  - name: j1\n    tasks: 3\n    task: {cpu: 1, nvidia.com/gpu: 1}\n";
  c.Op(2).B(static_cast<int>(yaml.size()));  // Bytes(255): length byte, then the text
  c.b += yaml;
  c.S("scenario.yaml").B(1);                 // source name; slot 1
  c.Op(16).B(1).B(1);
  c.Op(22).B(1).B(3);
  Write("capi_fuzz", "scenario", c.b);

  // Followers (opcode bytes 240-243: ops 32-35) of directories that do not
  // exist, and the follower calls on an engine that is none.
  Prog f;
  f.Op(0).S("cpu=8").B(0).B(0).B(0).B(0);           // an engine in slot 0
  f.Op(240).B(1).S("root/a").I(0);                  // open a follower of a missing store
  f.Op(240).B(0).I(0);                              // ... of NULL
  f.Op(240).B(3).S("j1").I(5).B(7);                 // ... bad struct_size
  f.Op(241).B(0);                                   // catch up: not a follower
  f.Op(242).B(0).B(0);                              // lag: zeros
  f.Op(242).B(1).B(3).B(0);                         // lag: bad struct_size
  f.Op(243).B(1).B(0).I(-1);                        // promote: not a follower
  f.Op(243).B(0).B(0).I(-2);                        // promote: bad wait
  f.Op(3).B(0);
  f.Op(241).B(0);                                   // a destroyed handle
  Write("capi_fuzz", "follower", f.b);

  // Plans (op 31 with selector 2): a reclaim made, applied, applied again
  // (stale), a gang's plan, a plan with no victims allowed, applies to an
  // empty slot and to a destroyed engine.
  Prog r;
  r.Op(0).S("cpu=8").B(2).S("root/a").B(0).S("root/b").B(0).B(0).B(0);     // slot 0
  r.Op(9).B(0).S("j1").S("root/a").Null().I(8).S("cpu=1").B(1).B(0);        // refs[0]
  r.Op(29).B(0).B(0).I(8).B(0);                                             // allocate 8
  r.Op(9).B(0).S("j2").S("root/b").Null().I(1).S("cpu=1").B(1).B(1);        // refs[1]
  r.Op(31).B(0).B(2).B(0).B(1).B(0).B(2);  // plan for j2 (reclaim, no limit), victim 0 kept
  r.Op(31).B(0).B(2).B(1);                 // apply
  r.Op(31).B(0).B(2).B(1);                 // apply again: stale
  r.Op(10).B(0).S("j3").S("root/b").Null().I(2).S("cpu=1").B(21).I(2).B(1).B(3);  // a gang of 2
  r.Op(31).B(0).B(2).B(64).B(3).B(0);      // max_victims 0: fails, short cpu
  r.Op(31).B(0).B(2).B(1);                 // apply it: refused
  r.Op(31).B(0).B(2).B(0).B(3).B(1).B(4);  // the gang's plan, victim 1 kept
  r.Op(31).B(1).B(2).B(1);                 // apply to an empty slot
  r.Op(31).B(0).B(2).B(1);                 // apply
  r.Op(3).B(0);
  r.Op(31).B(0).B(2).B(1);                 // apply to a destroyed engine
  Write("capi_fuzz", "plan", r.b);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  g_root = argv[1];
  Traces();
  Codec();
  Capi();
  return 0;
}
