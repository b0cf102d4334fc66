// Worked examples of docs/spec.md §4/§5 and the §3 validation rules on engine::Tree.
#include "engine/tree.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace hdrf::engine {
namespace {

constexpr int64_t kCpu = 1000;           // 1 CPU in millicores
constexpr int64_t kGpu = 1000;           // 1 GPU in milli-units
constexpr int64_t kGi = 1073741824;      // 1 GiB in bytes

QueueSpec Q(std::string path, double w = 1) {
  QueueSpec q;
  q.path = std::move(path);
  q.weight = w;
  return q;
}

JobSpec J(std::string name, std::string queue, int64_t tasks, ResourceAmounts task,
          std::string user = "u") {
  JobSpec j;
  j.name = std::move(name);
  j.queue = std::move(queue);
  j.tasks = tasks;
  j.task = std::move(task);
  j.user = std::move(user);
  return j;
}

int64_t Allocated(const Tree& t, const std::string& job) {
  return t.GetJob(*t.FindJob(job)).allocated;
}

std::unique_ptr<Tree> Make(const ResourceAmounts& cluster, const std::vector<QueueSpec>& qs) {
  auto t = Tree::Create(cluster, qs);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

TEST(TreeTest, WorkedExampleComplementaryChildren) {
  auto t = Make({{"cpu", 10 * kCpu}, {"nvidia.com/gpu", 10 * kGpu}},
                {Q("root/sci", 50), Q("root/eng", 50), Q("root/eng/dev", 50), Q("root/eng/prod", 50)});
  ASSERT_TRUE(t->Submit(J("sci", "root/sci", 10, {{"cpu", kCpu}, {"nvidia.com/gpu", kGpu}})).ok());
  ASSERT_TRUE(t->Submit(J("dev", "root/eng/dev", 10, {{"cpu", kCpu}})).ok());
  ASSERT_TRUE(t->Submit(J("prod", "root/eng/prod", 10, {{"nvidia.com/gpu", kGpu}})).ok());
  t->Fill();
  EXPECT_EQ(Allocated(*t, "sci"), 5);
  EXPECT_EQ(Allocated(*t, "dev"), 5);
  EXPECT_EQ(Allocated(*t, "prod"), 5);
  EXPECT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
}

TEST(TreeTest, WorkedExampleSaturatedSibling) {
  auto t = Make({{"cpu", 30 * kCpu}, {"nvidia.com/gpu", 30 * kGpu}}, {});
  const ResourceAmounts cpu{{"cpu", kCpu}}, gpu{{"nvidia.com/gpu", kGpu}};
  ASSERT_TRUE(t->CreateQueue(Q("root/n1")).ok());
  for (auto [job, q, shape] : std::vector<std::tuple<std::string, std::string, ResourceAmounts>>{
           {"n11", "root/n1/n11", cpu}, {"n21", "root/n2/n21", cpu}, {"n31", "root/n3/n31", cpu},
           {"n32", "root/n3/n32", gpu}, {"n41", "root/n4/n41", gpu}}) {
    std::string parent = q.substr(0, q.rfind('/'));
    if (!t->FindQueue(parent).ok()) {
      ASSERT_TRUE(t->CreateQueue(Q(parent)).ok());
    }
    ASSERT_TRUE(t->CreateQueue(Q(q)).ok());
    ASSERT_TRUE(t->Submit(J(job, q, 30, shape)).ok());
  }
  t->Fill();
  EXPECT_EQ(Allocated(*t, "n11"), 10);
  EXPECT_EQ(Allocated(*t, "n21"), 10);
  EXPECT_EQ(Allocated(*t, "n31"), 10);
  EXPECT_EQ(Allocated(*t, "n32"), 15);
  EXPECT_EQ(Allocated(*t, "n41"), 15);
}

TEST(TreeTest, DrfPaperExample) {
  auto t = Make({{"cpu", 9 * kCpu}, {"memory", 18 * kGi}}, {Q("root/a"), Q("root/b")});
  ASSERT_TRUE(t->Submit(J("A", "root/a", 100, {{"cpu", kCpu}, {"memory", 4 * kGi}})).ok());
  ASSERT_TRUE(t->Submit(J("B", "root/b", 100, {{"cpu", 3 * kCpu}, {"memory", kGi}})).ok());
  t->Fill();
  EXPECT_EQ(Allocated(*t, "A"), 3);
  EXPECT_EQ(Allocated(*t, "B"), 2);
}

TEST(TreeTest, ValidationRefusesAndChangesNothing) {
  auto t = Make({{"cpu", 10 * kCpu}}, {});
  QueueSpec eng = Q("root/eng");
  eng.capability = {{"cpu", 8 * kCpu}};
  eng.guarantee = {{"cpu", 4 * kCpu}};
  ASSERT_TRUE(t->CreateQueue(eng).ok());
  const uint64_t before = t->Digest();
  auto expect_refused = [&](const Status& s, const std::string& what) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
    EXPECT_EQ(t->Digest(), before);
  };
  QueueSpec big = Q("root/eng/dev");
  big.capability = {{"cpu", 9 * kCpu}};
  expect_refused(t->CreateQueue(big), "exceeds parent root/eng");
  QueueSpec g = Q("root/eng/dev");
  g.guarantee = {{"cpu", 5 * kCpu}};
  expect_refused(t->CreateQueue(g), "more than its guarantee");
  QueueSpec gc = Q("root/other");
  gc.guarantee = {{"cpu", 7 * kCpu}};
  expect_refused(t->CreateQueue(gc), "more than the cluster");
  QueueSpec gcap = Q("root/x");
  gcap.capability = {{"cpu", 1 * kCpu}};
  gcap.guarantee = {{"cpu", 2 * kCpu}};
  expect_refused(t->CreateQueue(gcap), "exceeds capability");
  expect_refused(t->CreateQueue(Q("root/eng")), "already exists");
  expect_refused(t->CreateQueue(Q("root/nope/x")), "does not exist");
  QueueSpec unknown = Q("root/y");
  unknown.capability = {{"memory", 1}};
  expect_refused(t->CreateQueue(unknown), "unknown resource 'memory'");
  QueueSpec lower = eng;
  ASSERT_TRUE(t->CreateQueue([&] { QueueSpec d = Q("root/eng/dev"); d.capability = {{"cpu", 6 * kCpu}}; return d; }()).ok());
  const uint64_t before2 = t->Digest();
  lower.capability = {{"cpu", 5 * kCpu}};
  Status s = t->UpdateQueue(lower);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("below descendant root/eng/dev"), std::string::npos) << s.message();
  EXPECT_EQ(t->Digest(), before2);
  // A queue under a leaf that holds jobs.
  ASSERT_TRUE(t->Submit(J("j", "root/eng/dev", 1, {{"cpu", kCpu}})).ok());
  Status under = t->CreateQueue(Q("root/eng/dev/sub"));
  EXPECT_NE(under.message().find("leaf that holds jobs"), std::string::npos) << under.message();
}

TEST(TreeTest, CloseCascadesAndDeleteNeedsClosedAndEmpty) {
  auto t = Make({{"cpu", 10 * kCpu}}, {Q("root/a/b"), Q("root/a/c")});
  ASSERT_TRUE(t->Submit(J("j", "root/a/b", 1, {{"cpu", kCpu}})).ok());
  EXPECT_FALSE(t->DeleteQueue("root/a").ok());  // open
  ASSERT_TRUE(t->SetQueueState("root/a", QueueState::kClosed).ok());
  EXPECT_EQ(t->GetQueue(*t->FindQueue("root/a/c")).state, QueueState::kClosed);
  EXPECT_FALSE(t->Submit(J("k", "root/a/c", 1, {{"cpu", kCpu}})).ok());
  Status del = t->DeleteQueue("root/a");
  EXPECT_NE(del.message().find("holds 1 jobs"), std::string::npos) << del.message();
  ASSERT_TRUE(t->Remove(*t->FindJob("j")).ok());
  ASSERT_TRUE(t->DeleteQueue("root/a").ok());
  EXPECT_FALSE(t->FindQueue("root/a/b").ok());
  EXPECT_EQ(t->queue_count(), 1u);
  EXPECT_FALSE(t->SetQueueState("root/zz", QueueState::kOpen).ok());
}

TEST(TreeTest, EventsOnUnknownJobsAndBelowZeroAreRefused) {
  auto t = Make({{"cpu", 4 * kCpu}}, {Q("root/a")});
  auto id = t->Submit(J("j", "root/a", 2, {{"cpu", kCpu}}));
  ASSERT_TRUE(id.ok());
  EXPECT_FALSE(t->Release(*id, 1).ok());
  EXPECT_FALSE(t->Allocate(*id, 3).ok());
  EXPECT_FALSE(t->Allocate(999, 1).ok());
  EXPECT_TRUE(t->Allocate(*id, 2).ok());
  EXPECT_FALSE(t->Finish(*id, 3).ok());
  EXPECT_FALSE(t->Submit(J("huge", "root/a", 1, {{"cpu", 5 * kCpu}})).ok());
  EXPECT_FALSE(t->Submit(J("j", "root/a", 1, {{"cpu", kCpu}})).ok());
}

TEST(TreeTest, AdmissionDescendsToLeastLoadedOpenChild) {
  auto t = Make({{"cpu", 10 * kCpu}}, {Q("root/a/x"), Q("root/a/y"), Q("root/b")});
  auto j1 = t->Submit(J("j1", "root/a", 5, {{"cpu", kCpu}}));
  ASSERT_TRUE(j1.ok());
  EXPECT_EQ(t->GetJob(*j1).queue, "root/a/x");  // tie: name order
  ASSERT_TRUE(t->Allocate(*j1, 2).ok());
  auto j2 = t->Submit(J("j2", "", 1, {{"cpu", kCpu}}));
  EXPECT_EQ(t->GetJob(*j2).queue, "root/b");
  auto j3 = t->Submit(J("j3", "root/a", 1, {{"cpu", kCpu}}));
  EXPECT_EQ(t->GetJob(*j3).queue, "root/a/y");
}

// A cluster that hovers at full use flips the saturated set on every event:
// the views of the two sets are reused (no full rebuild per flip) and stay
// exact.
TEST(TreeTest, SaturationFlipsReuseViews) {
  auto t = Make({{"cpu", 8 * kCpu}, {"memory", 8 * kGi}}, {Q("root/a/x"), Q("root/a/y"), Q("root/b")});
  std::vector<JobId> ids;
  for (int i = 0; i < 8; ++i) {
    auto id = t->Submit(J("j" + std::to_string(i), i % 2 ? "root/a/x" : "root/b", 4,
                          {{"cpu", kCpu}, {"memory", (i % 3 + 1) * kGi / 4}}));
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  t->Fill();  // cpu full: 8 tasks
  ASSERT_EQ(t->saturated(), 1u);
  const uint64_t rebuilds = t->counters().full_rebuilds;
  for (int round = 0; round < 200; ++round) {
    JobId j = ids[round % ids.size()];
    if (t->GetJob(j).allocated == 0) continue;
    ASSERT_TRUE(t->Release(j, 1).ok());
    ASSERT_EQ(t->saturated(), 0u);
    ASSERT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
    ASSERT_TRUE(t->Step().has_value());
    ASSERT_EQ(t->saturated(), 1u);
    ASSERT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
  }
  EXPECT_LE(t->counters().full_rebuilds, rebuilds + 1);  // the second view, once
  EXPECT_GE(t->counters().view_switches, 300u);
}

// Jobs removed and submitted while the cluster flips between full and not:
// a removal retires the job (saved views keep their contribution until they
// catch up) instead of dropping the saved views, so flips still reuse them;
// every view stays exact, and retired ids are not handed out again until
// the saved views are dropped.
TEST(TreeTest, RemovalsBetweenSaturationFlipsKeepViewsExact) {
  auto t = Make({{"cpu", 8 * kCpu}, {"memory", 64 * kGi}}, {Q("root/a/x"), Q("root/a/y"), Q("root/b")});
  const char* leaves[] = {"root/a/x", "root/a/y", "root/b"};
  std::vector<JobId> ids;
  int next = 0;
  auto submit = [&](int tasks) {
    const int i = next++;
    auto id = t->Submit(J("j" + std::to_string(i), leaves[i % 3], tasks,
                          {{"cpu", kCpu}, {"memory", (i % 3 + 1) * kGi / 4}}));
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : kNone;
  };
  for (int i = 0; i < 12; ++i) ids.push_back(submit(2));
  t->Fill();  // cpu full: 8 tasks
  ASSERT_EQ(t->saturated(), 1u);
  const uint64_t rebuilds = t->counters().full_rebuilds;
  for (int round = 0; round < 300; ++round) {
    // A running job leaves (the cluster frees up), a new one arrives, and
    // the freed room is filled again (full).
    size_t k = static_cast<size_t>(round * 7) % ids.size();
    while (t->GetJob(ids[k]).allocated == 0) k = (k + 1) % ids.size();
    const JobId gone = ids[k];
    ASSERT_TRUE(t->Remove(gone).ok());
    ASSERT_EQ(t->saturated(), 0u);
    ASSERT_TRUE(t->CheckInvariants().ok()) << round << ": " << t->CheckInvariants().ToString();
    ids[k] = submit(1 + round % 3);
    ASSERT_NE(ids[k], kNone);
    t->Fill();
    ASSERT_EQ(t->saturated(), 1u);
    ASSERT_TRUE(t->CheckInvariants().ok()) << round << ": " << t->CheckInvariants().ToString();
  }
  // Without retiring, every removal dropped the saved views and every flip
  // back to full rebuilt one: ~300 rebuilds. With it, a rebuild only after
  // live/8 + 64 retired jobs.
  EXPECT_LE(t->counters().full_rebuilds, rebuilds + 12) << t->counters().full_rebuilds - rebuilds;
  EXPECT_GE(t->counters().view_switches, 500u);
}

// The enqueue gate's running sums (docs/spec.md §12) are exact, not int64
// (issue 26): a gang whose minimum is just below 2^63, in a leaf with 1 CPU
// in use, wrapped usage + minimum below zero and was let in at once.
TEST(TreeTest, EnqueueGateSumsDoNotWrap) {
  TreeOptions o;
  o.overcommit_factor = 1.0;
  auto made = Tree::Create({{"cpu", 64 * kCpu}}, {Q("root/a"), Q("root/b")}, o);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto& t = *made;
  ASSERT_TRUE(t->Submit(J("small", "root/a", 2, {{"cpu", kCpu}})).ok());
  t->Fill();
  ASSERT_EQ(Allocated(*t, "small"), 2);
  const int64_t huge = INT64_MAX / kCpu;  // huge × 1 CPU fits int64, + 1 CPU does not
  JobSpec big = J("big", "root/a", huge, {{"cpu", kCpu}});
  big.min_available = huge;
  ASSERT_TRUE(t->Submit(big).ok());
  EXPECT_EQ(t->GetJob(*t->FindJob("big")).state, JobState::kPending);
  t->Fill();
  EXPECT_EQ(Allocated(*t, "big"), 0);
  EXPECT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();

  // The gate off: every job is Inqueue at once, and the sums over three such
  // gangs (3 × 2^63) stay exact.
  auto off = Make({{"cpu", 64 * kCpu}}, {Q("root/a")});
  for (const char* name : {"g1", "g2", "g3"}) {
    JobSpec g = J(name, "root/a", huge, {{"cpu", kCpu}});
    g.min_available = huge;
    ASSERT_TRUE(off->Submit(g).ok());
  }
  off->Fill();
  EXPECT_TRUE(off->CheckInvariants().ok()) << off->CheckInvariants().ToString();
}


// An applied plan is its changes and nothing else: a twin tree that makes
// them one by one (Release each victim's unit, Allocate the taker's demand)
// ends with the same current view bit for bit (keys, shares, vectors,
// blocked flags) after every plan, on a full cluster where each plan moves
// the saturated set away and back (gangs: several victims, a release that
// does not flip in between; a unit of two tasks for one: a plan that does
// not come back), and after the tasks that end in between and the fills
// that follow (the other set's view visited). A guard for any change to
// how ApplyPlan settles the shares.
TEST(TreeTest, AppliedPlanMatchesItsChangesOneByOne) {
  const std::vector<std::string> leaves = {"root/a/x", "root/a/y", "root/b/z", "root/b/u", "root/c"};
  auto make = [&] {
    std::vector<QueueSpec> qs;
    for (const std::string& l : leaves) qs.push_back(Q(l, l == "root/c" ? 6 : 1));
    auto t = Make({{"cpu", 24 * kCpu}, {"memory", 128 * kGi}}, qs);
    for (int i = 0; i < 10; ++i) {
      JobSpec j = J("h" + std::to_string(i), leaves[i % 4], i == 7 ? 2 : 6,
                    {{"cpu", kCpu}, {"memory", (i % 3 + 1) * kGi}});
      if (i == 7) j.min_available = 2;  // gives its 2 tasks as one unit: one flip, not back
      EXPECT_TRUE(t->Submit(j).ok());
    }
    t->Fill();  // 24 of 60 tasks: cpu full
    for (int i = 0; i < 6; ++i) {
      JobSpec j = J("w" + std::to_string(i), i % 2 ? "root/c" : "root/a/y", 8, {{"cpu", kCpu}, {"memory", kGi}});
      j.min_available = i % 3 == 0 ? 2 : 1;  // a gang's first step takes two units' room
      EXPECT_TRUE(t->Submit(j).ok());
    }
    return t;
  };
  auto applied_tree = make(), single = make();
  ASSERT_EQ(applied_tree->saturated(), 1u);
  auto same = [&](const std::string& when) {
    ASSERT_EQ(applied_tree->saturated(), single->saturated()) << when;
    for (std::string path : {"root", "root/a", "root/b", "root/a/x", "root/a/y", "root/b/z", "root/b/u", "root/c"}) {
      const QueueInfo a = applied_tree->GetQueue(*applied_tree->FindQueue(path)), b = single->GetQueue(*single->FindQueue(path));
      EXPECT_EQ(a.usage, b.usage) << when << " " << path;
      EXPECT_EQ(a.vector, b.vector) << when << " " << path;  // doubles, compared exactly
      EXPECT_EQ(a.share, b.share) << when << " " << path;
      EXPECT_EQ(a.key, b.key) << when << " " << path;
      EXPECT_EQ(a.blocked, b.blocked) << when << " " << path;
    }
    for (int i = 0; i < 16; ++i) {
      const std::string name = i < 10 ? "h" + std::to_string(i) : "w" + std::to_string(i - 10);
      const JobInfo a = applied_tree->GetJob(*applied_tree->FindJob(name)), b = single->GetJob(*single->FindJob(name));
      EXPECT_EQ(a.allocated, b.allocated) << when << " " << a.name;
      EXPECT_EQ(a.key, b.key) << when << " " << a.name;
      EXPECT_EQ(a.blocked, b.blocked) << when << " " << a.name;
    }
    ASSERT_TRUE(applied_tree->CheckInvariants().ok()) << when << ": " << applied_tree->CheckInvariants().ToString();
    ASSERT_TRUE(single->CheckInvariants().ok()) << when << ": " << single->CheckInvariants().ToString();
  };
  same("start");
  int applied = 0;
  for (int round = 0; round < 150; ++round) {
    const JobId w = *applied_tree->FindJob("w" + std::to_string(round % 6));
    auto p = applied_tree->MakePlan(w, PlanMode::kReclaim, std::nullopt);
    ASSERT_TRUE(p.ok() || p.status().code() == StatusCode::kFailedPrecondition) << p.status().ToString();
    if (!p.ok() || !p->fits || p->victims.empty()) continue;
    ASSERT_TRUE(applied_tree->ApplyPlan(w, p->tasks, p->victims, PlanMode::kReclaim).ok());
    for (const auto& v : p->victims) ASSERT_TRUE(single->Release(v.job, v.tasks).ok());
    ASSERT_TRUE(single->Allocate(w, p->tasks).ok());
    ++applied;
    same("plan " + std::to_string(applied));
    // A task ends and the room is filled again: both trees visit the other
    // set's view.
    const JobId h = *applied_tree->FindJob("h" + std::to_string(round % 10));
    if (round % 2 == 0 && applied_tree->GetJob(h).allocated > 0) {
      ASSERT_TRUE(applied_tree->Finish(h, 1).ok());
      ASSERT_TRUE(single->Finish(h, 1).ok());
      applied_tree->Fill();
      single->Fill();
      same("finish " + std::to_string(round));
    }
  }
  EXPECT_GE(applied, 8);
}

// Queue::holders (a leaf's jobs holding a task, which the plan search walks)
// follows every way an allocation crosses 0, and the order it ends in does
// not change a plan: two trees reach one state by events in opposite orders
// (so their lists differ) and make the same plans.
TEST(TreeTest, HoldersFollowAllocationsAndDoNotOrderPlans) {
  auto make = [&](bool reverse) {
    auto t = Make({{"cpu", 12 * kCpu}}, {Q("root/a"), Q("root/b")});
    auto check = [&](const std::string& when) {
      EXPECT_TRUE(t->CheckInvariants().ok()) << (reverse ? "reversed, " : "") << when << ": "
                                             << t->CheckInvariants().ToString();
    };
    std::vector<JobId> ids;
    for (int i = 0; i < 6; ++i) ids.push_back(*t->Submit(J("a" + std::to_string(i), "root/a", 3, {{"cpu", kCpu}})));
    std::vector<JobId> order = ids;
    if (reverse) std::reverse(order.begin(), order.end());
    for (JobId id : order) {
      EXPECT_TRUE(t->Allocate(id, 2).ok());
      check("allocate");
    }
    for (JobId id : {order[1], order[4]}) {  // to 0 and back: swap-removes
      EXPECT_TRUE(t->Release(id, 2).ok());
      check("release to 0");
    }
    for (JobId id : {order[4], order[1]}) {
      EXPECT_TRUE(t->Allocate(id, 2).ok());
      check("allocate again");
    }
    EXPECT_TRUE(t->Finish(ids[2], 2).ok());  // 1 task left, none held
    check("finish to 0");
    EXPECT_TRUE(t->Allocate(ids[2], 1).ok());
    check("allocate the last task");
    EXPECT_TRUE(t->Remove(ids[3]).ok());  // removed holding 2 tasks
    check("remove a holder");
    // Restored holding tasks (recovery's raw path), then its tasks folded
    // to 0 and back (RestoreTasks).
    JobSpec r = J("a6", "root/a", 3, {{"cpu", kCpu}});
    EXPECT_TRUE(t->RestoreJob(r, 100, 3, JobState::kRunning).ok());
    const JobId a6 = *t->FindJob("a6");
    t->RestoreTasks(a6, 0, 3);
    t->RestoreTasks(a6, 3, 3);
    t->RebuildAll();
    check("restore");
    JobSpec b = J("b0", "root/b", 4, {{"cpu", kCpu}});
    b.min_available = 4;  // one step of 4 tasks: several victims
    EXPECT_TRUE(t->Submit(b).ok());
    check("submit");
    return t;
  };
  auto fwd = make(false), rev = make(true);
  const JobId b0 = *fwd->FindJob("b0");
  ASSERT_EQ(b0, *rev->FindJob("b0"));
  auto pf = fwd->MakePlan(b0, PlanMode::kReclaim, std::nullopt);
  auto pr = rev->MakePlan(b0, PlanMode::kReclaim, std::nullopt);
  ASSERT_TRUE(pf.ok() && pr.ok()) << pf.status().ToString() << " " << pr.status().ToString();
  ASSERT_TRUE(pf->fits);
  std::vector<std::pair<std::string, int64_t>> victims_f, victims_r;
  for (const auto& v : pf->victims) victims_f.emplace_back(fwd->job_name(v.job), v.tasks);
  for (const auto& v : pr->victims) victims_r.emplace_back(rev->job_name(v.job), v.tasks);
  EXPECT_EQ(victims_f, victims_r);
  // a6 holds 3 (the largest share); then at 2 each the latest submitted of
  // the ties, one unit at a time: a6 (restored with seq 100), a5, a4.
  const std::vector<std::pair<std::string, int64_t>> expected = {{"a6", 1}, {"a6", 1}, {"a5", 1}, {"a4", 1}};
  EXPECT_EQ(victims_f, expected);
  ASSERT_TRUE(fwd->ApplyPlan(b0, pf->tasks, pf->victims, PlanMode::kReclaim).ok());
  EXPECT_TRUE(fwd->CheckInvariants().ok()) << fwd->CheckInvariants().ToString();
}

}  // namespace
}  // namespace hdrf::engine
