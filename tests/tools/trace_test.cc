// The trace format (api/hdrf/trace.h): round trips, checksums, corruption and
// truncation, and the generator's determinism and validity.
#include "hdrf/trace.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "hdrf/engine.h"
#include "api/facade/engine_impl.h"  // CheckEngineInvariants

namespace hdrf {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  static int counter = 0;
  return ::testing::TempDir() + "/hdrf_trace_test_" + std::to_string(::getpid()) + "_" +
         std::to_string(counter++) + "_" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

uint64_t Get64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}
void Put64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

// Byte offsets of a file image's sections.
struct Layout {
  uint64_t H, E, K, events_at, table_at;
};
Layout LayoutOf(const std::string& img) {
  Layout l;
  l.H = Get64(img, 16);
  l.E = Get64(img, 24);
  l.K = (l.E + kTraceBlockEvents - 1) / kTraceBlockEvents;
  l.events_at = 32 + l.H + 8;
  l.table_at = l.events_at + 8 * l.E;
  return l;
}
// Recomputes every checksum after a deliberate edit of the events.
void Reseal(std::string& img) {
  Layout l = LayoutOf(img);
  for (uint64_t b = 0; b < l.K; ++b) {
    uint64_t first = b * kTraceBlockEvents, count = std::min(kTraceBlockEvents, l.E - first);
    Put64(img, l.table_at + 8 * b, TraceChecksum(img.data() + l.events_at + 8 * first, 8 * count, b));
  }
  Put64(img, l.table_at + 8 * l.K, TraceChecksum(img.data() + l.table_at, 8 * l.K, 0));
}

Trace SmallTrace() {
  Trace t;
  t.cluster = {{"cpu", 10000}, {"memory", int64_t{64} << 30}, {"example.com/foo", 5000}};
  QueueSpec eng;
  eng.path = "root/eng";
  eng.weight = 2.5;
  eng.capability = {{"cpu", 8000}};
  eng.guarantee = {{"cpu", 2000}, {"memory", int64_t{1} << 30}};
  eng.reclaimable = false;
  QueueSpec dev;
  dev.path = "root/eng/dev";
  dev.weight = 1;
  dev.min_user_limit_percent = 50;
  dev.user_limit_factor = 1.5;
  QueueSpec ops;
  ops.path = "root/ops";
  ops.weight = 3;
  ops.state = QueueState::kClosing;
  t.queues = {eng, dev, ops};
  JobSpec a;
  a.name = "a";
  a.queue = "root/eng/dev";
  a.user = "alice";
  a.tasks = 4;
  a.task = {{"cpu", 1000}, {"memory", int64_t{1} << 30}};
  a.weight = 2;
  a.min_available = 2;
  JobSpec b;
  b.name = "b";
  b.queue = "root/eng/dev";
  b.user = "bob";
  b.tasks = 3;
  b.task = {{"cpu", 500}, {"example.com/foo", 1000}};
  t.jobs = {a, b};
  t.events = {{TraceEventType::kSubmit, 0, 0},   {TraceEventType::kSubmit, 1, 0},
              {TraceEventType::kAllocate, 0, 2}, {TraceEventType::kAllocate, 1, 3},
              {TraceEventType::kRelease, 1, 1},  {TraceEventType::kFinish, 0, 1},
              {TraceEventType::kRemove, 1, 0}};
  return t;
}

void ExpectSameTrace(const Trace& x, const Trace& y) {
  EXPECT_EQ(x.cluster, y.cluster);
  ASSERT_EQ(x.queues.size(), y.queues.size());
  for (size_t i = 0; i < x.queues.size(); ++i) {
    const QueueSpec &a = x.queues[i], &b = y.queues[i];
    EXPECT_EQ(a.path, b.path);
    EXPECT_EQ(a.weight, b.weight);
    EXPECT_EQ(a.capability, b.capability);
    EXPECT_EQ(a.guarantee, b.guarantee);
    EXPECT_EQ(a.reclaimable, b.reclaimable);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.min_user_limit_percent, b.min_user_limit_percent);
    EXPECT_EQ(a.user_limit_factor, b.user_limit_factor);
  }
  ASSERT_EQ(x.jobs.size(), y.jobs.size());
  for (size_t i = 0; i < x.jobs.size(); ++i) {
    const JobSpec &a = x.jobs[i], &b = y.jobs[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.queue, b.queue);
    EXPECT_EQ(a.user, b.user);
    EXPECT_EQ(a.tasks, b.tasks);
    EXPECT_EQ(a.task, b.task);
    EXPECT_EQ(a.weight, b.weight);
    EXPECT_EQ(a.min_available, b.min_available);
  }
  ASSERT_EQ(x.events.size(), y.events.size());
  for (size_t i = 0; i < x.events.size(); ++i) {
    EXPECT_EQ(x.events[i].type, y.events[i].type) << "event " << i + 1;
    EXPECT_EQ(x.events[i].job, y.events[i].job) << "event " << i + 1;
    EXPECT_EQ(x.events[i].n, y.events[i].n) << "event " << i + 1;
  }
}

TEST(TraceChecksum, IsXxh64) {
  EXPECT_EQ(TraceChecksum("", 0, 0), 0xef46db3751d8e999ULL);
  EXPECT_EQ(TraceChecksum("abc", 3, 0), 0x44bc2cf5ad770999ULL);
  std::string hundred(100, '\0');
  for (int i = 0; i < 100; ++i) hundred[i] = static_cast<char>(i);
  EXPECT_EQ(TraceChecksum(hundred.data(), hundred.size(), 7), 0x80653e7e9b887cddULL);
  std::string thousand(1000, '\0');
  for (int i = 0; i < 1000; ++i) thousand[i] = static_cast<char>(i * 7 % 256);
  EXPECT_EQ(TraceChecksum(thousand.data(), thousand.size(), 123456789), 0x0672c5ce66b70ea1ULL);
}

TEST(TraceFormat, RoundTripKeepsEveryField) {
  Trace t = SmallTrace();
  std::string path = TempPath("small.trace");
  ASSERT_TRUE(WriteTrace(t, path).ok());
  auto back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameTrace(t, *back);
  EXPECT_EQ(TraceSetupEvents(*back), 2u);
  // The file is exactly the encoded image, and starts with the magic.
  auto img = EncodeTrace(t);
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(ReadFile(path), *img);
  EXPECT_EQ(img->substr(0, 8), "HDRFTRC1");
  Layout l = LayoutOf(*img);
  EXPECT_EQ(l.E, t.events.size());
  EXPECT_EQ(img->size(), 48 + l.H + 8 * l.E + 8 * l.K);
  std::remove(path.c_str());
}

TEST(TraceFormat, RoundTripAcrossChecksumBlocks) {
  for (uint64_t count : {uint64_t{0}, kTraceBlockEvents - 1, kTraceBlockEvents, 2 * kTraceBlockEvents + 5}) {
    Trace t;
    t.cluster = {{"cpu", 1000}};
    JobSpec j;
    j.name = "j";
    j.queue = "root";
    j.tasks = 1000;
    j.task = {{"cpu", 1}};
    t.jobs = {j};
    t.events.push_back({TraceEventType::kSubmit, 0, 0});
    for (uint64_t i = 0; i < count; ++i)
      t.events.push_back({i % 2 ? TraceEventType::kRelease : TraceEventType::kAllocate, 0,
                          static_cast<uint32_t>(1 + i % 7)});
    auto img = EncodeTrace(t);
    ASSERT_TRUE(img.ok()) << img.status().ToString();
    auto back = DecodeTrace(img->data(), img->size());
    ASSERT_TRUE(back.ok()) << count << ": " << back.status().ToString();
    ExpectSameTrace(t, *back);
  }
  // No jobs, no events.
  Trace empty;
  empty.cluster = {{"cpu", 1}};
  auto img = EncodeTrace(empty);
  ASSERT_TRUE(img.ok());
  auto back = DecodeTrace(img->data(), img->size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->events.empty());
}

TEST(TraceFormat, LargeNRoundTrips) {
  Trace t = SmallTrace();
  t.jobs[0].tasks = kMaxTraceEventN;
  t.events[2].n = kMaxTraceEventN;
  t.events[5].n = kMaxTraceEventN;
  auto img = EncodeTrace(t);
  ASSERT_TRUE(img.ok()) << img.status().ToString();
  auto back = DecodeTrace(img->data(), img->size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->events[2].n, kMaxTraceEventN);
}

TEST(TraceFormat, WriterRejectsInvalidTraces) {
  auto expect_bad = [](Trace t, const std::string& what) {
    Status s = WriteTrace(t, TempPath("bad.trace"));
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(what));
  };
  Trace t = SmallTrace();
  t.events.insert(t.events.begin(), {TraceEventType::kAllocate, 0, 1});
  expect_bad(t, "event 1: allocate of job index 0 before its submission");
  t = SmallTrace();
  t.events.push_back({TraceEventType::kAllocate, 7, 1});
  expect_bad(t, "event 8: job index 7 out of range (2 jobs)");
  t = SmallTrace();
  t.events[2].n = 0;
  expect_bad(t, "event 3: allocate with n = 0");
  t = SmallTrace();
  t.events[2].n = kMaxTraceEventN + 1;
  expect_bad(t, "event 3: allocate with n = 16777216");
  t = SmallTrace();
  t.events.push_back({TraceEventType::kSubmit, 0, 0});
  expect_bad(t, "event 8: job index 0 submitted twice");
  t = SmallTrace();
  t.events.push_back({TraceEventType::kAllocate, 1, 1});
  expect_bad(t, "event 8: allocate of job index 1 after its removal");
  t = SmallTrace();
  t.events[6].n = 3;
  expect_bad(t, "event 7: remove with n = 3");
}

TEST(TraceFormat, ReadingAMissingFileNamesIt) {
  auto r = ReadTrace("/nonexistent/dir/x.trace");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_THAT(r.status().message(), HasSubstr("trace /nonexistent/dir/x.trace: cannot open"));
  auto d = ReadTrace(::testing::TempDir());
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("not a regular file"));
}

TEST(TraceFormat, EveryTruncationIsReportedWithItsOffset) {
  auto img = EncodeTrace(SmallTrace());
  ASSERT_TRUE(img.ok());
  for (size_t len = 0; len < img->size(); ++len) {
    auto r = DecodeTrace(img->data(), len, "t");
    ASSERT_FALSE(r.ok()) << "length " << len;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_THAT(r.status().message(), HasSubstr("t: truncated at offset " + std::to_string(len)))
        << "length " << len;
  }
  // Through the file reader too.
  std::string path = TempPath("cut.trace");
  WriteFile(path, img->substr(0, img->size() - 9));
  auto r = ReadTrace(path);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("trace " + path + ": truncated at offset " + std::to_string(img->size() - 9)));
  std::remove(path.c_str());
}

TEST(TraceFormat, EveryFlippedByteIsDetected) {
  auto img = EncodeTrace(SmallTrace());
  ASSERT_TRUE(img.ok());
  for (size_t at = 0; at < img->size(); ++at) {
    for (unsigned char mask : {0x01, 0x80}) {
      std::string bad = *img;
      bad[at] = static_cast<char>(bad[at] ^ mask);
      auto r = DecodeTrace(bad.data(), bad.size(), "t");
      ASSERT_FALSE(r.ok()) << "byte " << at << " mask " << int(mask);
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
    }
  }
  Layout l = LayoutOf(*img);
  auto flip = [&](size_t at) {
    std::string bad = *img;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    return DecodeTrace(bad.data(), bad.size(), "t").status().message();
  };
  EXPECT_THAT(flip(0), HasSubstr("t: not an hdrf trace (bad magic at offset 0"));
  EXPECT_THAT(flip(8), HasSubstr("unsupported version 17 at offset 8"));
  EXPECT_THAT(flip(40), HasSubstr("header checksum mismatch: bytes 0.." + std::to_string(32 + l.H)));
  EXPECT_THAT(flip(l.events_at + 8 * 3 + 1),
              HasSubstr("event block 0 (events 1..7, bytes " + std::to_string(l.events_at) + ".." +
                        std::to_string(l.table_at) + ") does not match its checksum at offset " +
                        std::to_string(l.table_at)));
  EXPECT_THAT(flip(l.table_at), HasSubstr("block checksum table"));
  std::string longer = *img + "xyz";
  EXPECT_THAT(DecodeTrace(longer.data(), longer.size(), "t").status().message(),
              HasSubstr("3 unexpected bytes after offset " + std::to_string(img->size())));
}

TEST(TraceFormat, ResealedBadEventsAreRejectedWithTheirOffset) {
  auto img = EncodeTrace(SmallTrace());
  ASSERT_TRUE(img.ok());
  Layout l = LayoutOf(*img);
  {
    std::string bad = *img;
    bad[l.events_at + 8 * 2] = 9;  // event 3: job index 9
    Reseal(bad);
    auto r = DecodeTrace(bad.data(), bad.size(), "t");
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("t: event 3 at offset " + std::to_string(l.events_at + 16) +
                                                ": job index 9 out of range (2 jobs)"));
  }
  {
    std::string bad = *img;
    bad[l.events_at + 8 * 4 + 4] = 7;  // event 5: type 7
    Reseal(bad);
    auto r = DecodeTrace(bad.data(), bad.size(), "t");
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("event 5 at offset " + std::to_string(l.events_at + 32) +
                                                ": unknown event type 7"));
  }
}

// Issue 26 item 6: a count read from a checksummed header is bounded by the
// bytes left before anything is allocated (here 2^28 resources in a header
// of a few hundred bytes; before, std::bad_alloc).
TEST(TraceFormat, ResealedHugeResourceCountIsRejected) {
  auto img = EncodeTrace(SmallTrace());
  ASSERT_TRUE(img.ok());
  const Layout l = LayoutOf(*img);
  std::string bad = *img;
  const uint32_t huge = uint32_t{1} << 28;
  for (int i = 0; i < 4; ++i) bad[32 + i] = static_cast<char>(huge >> (8 * i));  // the resource count
  Put64(bad, 32 + l.H, TraceChecksum(bad.data(), 32 + l.H, 0));                  // the header checksum
  auto r = DecodeTrace(bad.data(), bad.size(), "t");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("t: corrupt header at offset 36: resource table runs past the "
                                               "end of the header (needs 1342177280 bytes"));
}

TEST(TraceGen, SameOptionsSameBytes) {
  TraceGenOptions o;
  o.jobs = 300;
  o.depth = 2;
  o.fanout = 3;
  o.events = 20000;
  o.seed = 42;
  auto a = GenerateTrace(o);
  auto b = GenerateTrace(o);
  ASSERT_TRUE(a.ok() && b.ok());
  auto ia = EncodeTrace(*a), ib = EncodeTrace(*b);
  ASSERT_TRUE(ia.ok() && ib.ok());
  EXPECT_EQ(*ia, *ib);
  std::string p1 = TempPath("g1.trace"), p2 = TempPath("g2.trace");
  ASSERT_TRUE(WriteTrace(*a, p1).ok());
  ASSERT_TRUE(WriteTrace(*b, p2).ok());
  EXPECT_EQ(ReadFile(p1), ReadFile(p2));
  o.seed = 43;
  auto c = GenerateTrace(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(*EncodeTrace(*c), *ia);
  o.seed = 42;
  o.saturate = true;
  auto d = GenerateTrace(o);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(*EncodeTrace(*d), *ia);
  std::remove(p1.c_str());
  std::remove(p2.c_str());
}

TEST(TraceGen, ShapeOfTheTree) {
  TraceGenOptions o;
  o.jobs = 500;
  o.depth = 3;
  o.fanout = 4;
  o.events = 1000;
  TraceGenState st;
  auto t = GenerateTrace(o, &st);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->queues.size(), 4u + 16u + 64u);
  EXPECT_EQ(st.leaves, 64u);
  std::set<std::string> leaves, users;
  for (const QueueSpec& q : t->queues) {
    EXPECT_GE(q.weight, 1);
    EXPECT_LE(q.weight, 10);
    if (std::count(q.path.begin(), q.path.end(), '/') == 3) leaves.insert(q.path);
  }
  EXPECT_EQ(leaves.size(), 64u);
  std::set<std::string> used_leaves;
  for (const JobSpec& j : t->jobs) {
    EXPECT_TRUE(leaves.count(j.queue)) << j.queue;
    used_leaves.insert(j.queue);
    users.insert(j.user);
    EXPECT_GE(j.tasks, 1);
    EXPECT_LE(j.tasks, 64);
    EXPECT_EQ(j.task.at("pods"), 1000);
    for (const auto& [name, v] : j.task) EXPECT_TRUE(t->cluster.count(name)) << name;
  }
  EXPECT_GT(used_leaves.size(), 50u);
  EXPECT_GE(users.size(), 4u);
  EXPECT_EQ(t->events.size(), 1500u);
  EXPECT_EQ(TraceSetupEvents(*t), 500u);
  std::vector<std::string> want = {"cpu", "memory", "nvidia.com/gpu", "pods"};
  EXPECT_EQ(st.resources, want);
}

TEST(TraceGen, RejectsBadOptions) {
  TraceGenOptions o;
  o.depth = 17;
  EXPECT_FALSE(GenerateTrace(o).ok());
  o = {};
  o.fanout = 0;
  EXPECT_FALSE(GenerateTrace(o).ok());
  o = {};
  o.jobs = 0;
  EXPECT_THAT(GenerateTrace(o).status().message(), HasSubstr("--jobs >= 1"));
  o = {};
  o.fanout = 1000;
  o.depth = 3;
  EXPECT_THAT(GenerateTrace(o).status().message(), HasSubstr("10^7 leaf queues"));
  o = {};
  o.jobs = 0;
  o.events = 0;
  EXPECT_TRUE(GenerateTrace(o).ok());
}

// Replays `t` on one thread into a fresh engine; returns the number of
// refused events and the engine.
std::pair<int64_t, std::unique_ptr<Engine>> Replay(const Trace& t, std::string* first_error) {
  auto e = Engine::Create(t.cluster, t.queues);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return {-1, nullptr};
  std::unique_ptr<Engine> engine = std::move(e).value();
  std::vector<JobRef> refs(t.jobs.size());
  int64_t refused = 0;
  for (const TraceEvent& ev : t.events) {
    Status s;
    switch (ev.type) {
      case TraceEventType::kSubmit: {
        auto r = engine->Submit(t.jobs[ev.job]);
        if (r.ok()) refs[ev.job] = *r;
        else s = r.status();
        break;
      }
      case TraceEventType::kAllocate: s = engine->Allocate(refs[ev.job], ev.n); break;
      case TraceEventType::kRelease: s = engine->Release(refs[ev.job], ev.n); break;
      case TraceEventType::kFinish: s = engine->Finish(refs[ev.job], ev.n); break;
      case TraceEventType::kRemove: s = engine->Remove(refs[ev.job]); break;
    }
    if (!s.ok() && refused++ == 0 && first_error) *first_error = s.ToString();
  }
  return {refused, std::move(engine)};
}

void ExpectValid(const TraceGenOptions& o, bool check_invariants) {
  TraceGenState st;
  auto t = GenerateTrace(o, &st);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::string err;
  auto [refused, engine] = Replay(*t, &err);
  ASSERT_TRUE(engine);
  EXPECT_EQ(refused, 0) << err;
  EXPECT_EQ(engine->last_seq(), t->events.size());
  std::vector<JobInfo> jobs = engine->Jobs();
  ASSERT_EQ(jobs.size(), t->jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(jobs[i].name, t->jobs[i].name);
    EXPECT_EQ(jobs[i].allocated, st.allocated[i]) << jobs[i].name;
    EXPECT_LE(jobs[i].allocated, jobs[i].tasks);
  }
  std::vector<int64_t> total = engine->Total();
  EXPECT_EQ(total, st.capacity);
  for (size_t r = 0; r < st.used.size(); ++r) EXPECT_LE(st.used[r], st.capacity[r]);
  EXPECT_EQ(st.allocates + st.releases, o.events);
  if (check_invariants) {
    Status inv = CheckEngineInvariants(*engine);
    EXPECT_TRUE(inv.ok()) << inv.ToString();
  }
}

TEST(TraceGen, GeneratedTracesReplayWithoutRefusals) {
  TraceGenOptions o;
  o.jobs = 2000;
  o.depth = 2;
  o.fanout = 5;
  o.events = 200000;
  o.seed = 7;
  ExpectValid(o, true);
  o.saturate = true;
  ExpectValid(o, true);
  o.saturate = false;
  o.load = 0.2;
  o.alloc_percent = 90;
  o.seed = 8;
  ExpectValid(o, false);
  o = {};
  o.depth = 0;  // jobs live in root itself
  o.jobs = 50;
  o.events = 5000;
  ExpectValid(o, true);
}

TEST(TraceGen, LoadedClusterHitsItsLimits) {
  TraceGenOptions o;
  o.jobs = 1000;
  o.events = 100000;
  TraceGenState st;
  ASSERT_TRUE(GenerateTrace(o, &st).ok());
  EXPECT_GT(st.refits, 0);      // allocations sometimes do not fit,
  EXPECT_EQ(st.saturated, 0);   // yet nothing is ever exactly used up
  for (size_t r = 0; r < st.used.size(); ++r) EXPECT_GT(st.used[r], 0);
  o.saturate = true;
  TraceGenState full;
  ASSERT_TRUE(GenerateTrace(o, &full).ok());
  // Full use: saturation changes on most events.
  EXPECT_GT(full.flips, o.events / 2);
  EXPECT_GT(full.saturated, st.saturated);
}

TEST(TraceGen, AGivenClusterIsKeptAndFilledWithoutSaturating) {
  // 20 nodes of 64 cores, 256Gi and 110 pods, 8 GPUs: far less than 2000
  // jobs of up to 64 tasks ask, so it runs full.
  TraceGenOptions o;
  o.jobs = 2000;
  o.events = 100000;
  o.cluster = {{"cpu", 20 * 64000}, {"memory", 20 * 256 * (int64_t{1} << 30)}, {"pods", 20 * 110000},
               {"nvidia.com/gpu", 8000}};
  TraceGenState st;
  auto t = GenerateTrace(o, &st);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // The given capacity plus half a granule (250m, 512Mi, 1 unit).
  EXPECT_EQ(t->cluster.at("cpu"), 20 * 64000 + 125);
  EXPECT_EQ(t->cluster.at("memory"), 20 * 256 * (int64_t{1} << 30) + 256 * (int64_t{1} << 20));
  EXPECT_EQ(t->cluster.at("pods"), 20 * 110000 + 500);
  EXPECT_EQ(t->cluster.at("nvidia.com/gpu"), 8000 + 500);
  EXPECT_GT(st.refits, o.events / 10);  // full: many allocations do not fit
  EXPECT_EQ(st.saturated, 0);           // yet nothing is ever exactly used up
  ExpectValid(o, true);
  o.saturate = true;  // with saturate: exactly the given capacity
  auto s = GenerateTrace(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->cluster.at("nvidia.com/gpu"), 8000);
  // Resources it does not name keep the derived capacity.
  o = {};
  o.jobs = 200;
  o.events = 1000;
  auto derived = GenerateTrace(o);
  o.cluster = {{"cpu", 1000000}};
  auto partial = GenerateTrace(o);
  ASSERT_TRUE(derived.ok() && partial.ok());
  EXPECT_EQ(partial->cluster.at("cpu"), 1000125);
  EXPECT_EQ(partial->cluster.at("memory"), derived->cluster.at("memory"));
  for (const auto& [bad, message] : std::vector<std::pair<ResourceAmounts, std::string>>{
           {{{"gpu", 8000}}, "cluster resource 'gpu' is not one the generator uses"},
           {{{"cpu", 0}}, "cluster cpu must be > 0"},
           {{{"nvidia.com/gpu", 1000}}, "cluster nvidia.com/gpu 1000 is smaller than the largest task (8000)"},
       }) {
    o.cluster = bad;
    auto r = GenerateTrace(o);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr(message));
  }
}

}  // namespace
}  // namespace hdrf
