// hdrf serve as a user runs it: the real binary (HDRF_BIN) on a loopback
// port it picks (--listen 127.0.0.1:0), queried with cpp-httplib's client,
// every wait bounded. The answers are checked against the engine recovered
// from the same store in this process; the page is rendered by Debian's
// headless Chromium and its DOM checked for the queue names.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "hdrf/metrics.h"
#include "tests/run_shell.h"
#include "tests/tools/sample_tree.h"
#include "tests/tools/serve_harness.h"
#include "tools/explain_json.h"
#include "tools/tree_json.h"
#include "tools/tree_view.h"

namespace hdrf::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using serve_test::Chromium;
using serve_test::ClientFor;
using serve_test::FindChromium;
using serve_test::Clock;
using serve_test::MakeStore;
using serve_test::Recover;
using serve_test::Serve;
using serve_test::TempDir;
using serve_test::WaitFor;
using hdrf::testing::Slurp;
using nlohmann::json;

// One server on the sample store for the read-only tests.
class ServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_NE(std::getenv("HDRF_BIN"), nullptr) << "HDRF_BIN must name the hdrf binary";
    dir_ = TempDir();
    db_ = dir_ + "/store";
    MakeStore(db_);
    server_ = new Serve({"--db", db_, "--listen", "127.0.0.1:0", "--refresh", "0.05", "--history", "5"},
                        dir_ + "/serve.err");
    ASSERT_GT(server_->port(), 0) << server_->first_line() << server_->err();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  httplib::Result Get(const std::string& path) { return ClientFor(server_->port())->Get(path.c_str()); }

  static std::string dir_, db_;
  static Serve* server_;
};
std::string ServeTest::dir_, ServeTest::db_;
Serve* ServeTest::server_ = nullptr;

TEST_F(ServeTest, PrintsTheLoopbackUrl) {
  EXPECT_EQ(server_->first_line(), "listening on http://127.0.0.1:" + std::to_string(server_->port()) + "/\n");
}

TEST_F(ServeTest, MetricsAreTheEngineMetricsInTheTextFormat) {
  auto r = Get("/metrics");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  auto eng = Recover(db_);
  ASSERT_TRUE(eng);
  // The server is a follower: its text is a recovered engine's plus the two
  // follower lag families (after hdrf_durability_lag_events).
  std::string body = r->body;
  for (const char* family : {"hdrf_follower_lag_events", "hdrf_follower_lag_seconds"}) {
    const size_t at = body.find(std::string("# HELP ") + family + " ");
    ASSERT_NE(at, std::string::npos) << family;
    const size_t sample = body.find(std::string("\n") + family + " ", at);
    ASSERT_NE(sample, std::string::npos) << family;
    body.erase(at, body.find('\n', sample + 1) + 1 - at);
  }
  EXPECT_THAT(body, StartsWith(MetricsText(*eng)));
  EXPECT_THAT(r->body, HasSubstr("\n# TYPE hdrf_serve_state_age_seconds gauge\nhdrf_serve_state_age_seconds "));
  EXPECT_THAT(r->body, HasSubstr("hdrf_queue_weight{queue=\"root/training\"} 4\n"));
  EXPECT_EQ(r->body.back(), '\n');
}

TEST_F(ServeTest, QueuesAreTheTreeWithExactAndHumanAmounts) {
  auto r = Get("/api/queues");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  const json j = json::parse(r->body);
  auto eng = Recover(db_);
  ASSERT_TRUE(eng);
  const json want = TreeJson(TakeTreeSnapshot(*eng));
  for (const char* k : {"resources", "units", "cluster", "cluster_human"}) EXPECT_EQ(j[k], want[k]) << k;
  // The queues of hdrf queues --json, each with what the page explains
  // Share with: its child count and a non-blocked child with share 0.
  json queues = j["queues"];
  ASSERT_EQ(queues.size(), want["queues"].size());
  std::map<std::string, json> extra;
  for (json& q : queues) {
    extra[q["path"]] = {q["children"], q["zero_child"], q["zero_child_empty"]};
    for (const char* k : {"children", "zero_child", "zero_child_empty"}) q.erase(k);
  }
  EXPECT_EQ(queues, want["queues"]);
  // root's share is 0: training is not blocked and its share is 0, because
  // language's is (llama-finetune waits holding nothing); training holds GPUs.
  EXPECT_EQ(extra["root"], json({3, "root/training", false}));
  EXPECT_EQ(extra["root/training"], json({2, "root/training/language", false}));
  EXPECT_EQ(extra["root/analytics"], json({2, nullptr, false}));
  EXPECT_EQ(extra["root/serving"], json({0, nullptr, false}));
  EXPECT_EQ(j["last_seq"], eng->last_seq());
  EXPECT_EQ(j["job_count"], 6);
  EXPECT_EQ(j["queue_count"], 8);
  EXPECT_EQ(j["db"], db_);
  EXPECT_TRUE(j["refresh_error"].is_null());
  EXPECT_EQ(j["queues"][0]["allocated_human"]["memory"], "5.72Ti");
}

TEST_F(ServeTest, QueuesUnderAPathToADepth) {
  auto paths = [&](const std::string& query) {
    auto r = Get("/api/queues" + query);
    std::vector<std::string> out;
    if (!r || r->status != 200) return std::vector<std::string>{"HTTP " + std::to_string(r ? r->status : 0)};
    const json j = json::parse(r->body);
    EXPECT_EQ(j["queue_count"], 8) << query;  // the counts are the whole tree's
    for (const json& q : j["queues"]) out.push_back(q["path"]);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(paths("?under=root&depth=0"), V({"root"}));
  EXPECT_EQ(paths("?under=root&depth=1"), V({"root", "root/analytics", "root/serving", "root/training"}));
  EXPECT_EQ(paths("?under=root/training"), V({"root/training", "root/training/language", "root/training/vision"}));
  EXPECT_EQ(paths("?under=root/analytics&under=root/training&depth=1"),
            V({"root/analytics", "root/analytics/adhoc", "root/analytics/reports", "root/training",
               "root/training/language", "root/training/vision"}));
  EXPECT_EQ(paths("?depth=1"), V({"root", "root/analytics", "root/serving", "root/training"}));
  // At most `limit` children of each parent, the first by path; the
  // queues under the others go too.
  EXPECT_EQ(paths("?under=root&depth=2&limit=1"), V({"root", "root/analytics", "root/analytics/adhoc"}));
  EXPECT_EQ(paths("?under=root%2Fserving&depth=5"), V({"root/serving"}));
  // The same entries as the whole tree's.
  const json whole = json::parse(Get("/api/queues")->body);
  const json part = json::parse(Get("/api/queues?under=root/training&depth=0")->body);
  for (const json& q : whole["queues"])
    if (q["path"] == "root/training") {
      EXPECT_EQ(part["queues"][0], q);
    }

  struct Case {
    std::string query;
    int status;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"?under=root/nope", 404, "no queue root/nope"},
           {"?under=root&under=train", 404, "no queue train"},
           {"?under=", 404, "no queue "},
           {"?under=root&depth=-1", 400, "depth '-1' is not a whole number in 0..1000"},
           {"?under=root&depth=x", 400, "depth 'x' is not a whole number in 0..1000"},
           {"?under=root&depth=1001", 400, "depth '1001' is not a whole number in 0..1000"},
           {"?depth=", 400, "depth '' is not a whole number in 0..1000"},
           {"?limit=0", 400, "limit '0' is not a whole number in 1..1000000"},
           {"?limit=1.5", 400, "limit '1.5' is not a whole number in 1..1000000"},
       }) {
    auto r = Get("/api/queues" + c.query);
    ASSERT_TRUE(r) << c.query;
    EXPECT_EQ(r->status, c.status) << c.query;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json") << c.query;
    EXPECT_EQ(json::parse(r->body)["error"], c.error) << c.query;
  }
}

TEST_F(ServeTest, HistorySinceATimeHasOnlyTheNewerSamples) {
  json all;
  ASSERT_TRUE(WaitFor([&] {
    all = json::parse(Get("/api/history")->body);
    return all["samples"].size() >= 3;
  }));
  const int64_t t = all["samples"][1]["time_ms"];
  const json newer = json::parse(Get("/api/history?since=" + std::to_string(t))->body);
  ASSERT_FALSE(newer["samples"].empty());
  for (const json& s : newer["samples"]) EXPECT_GT(s["time_ms"].get<int64_t>(), t);
  EXPECT_EQ(newer["capacity"], 5);
  for (const char* bad : {"x", "-5", "1.5", ""}) {
    auto r = Get(std::string("/api/history?since=") + bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << bad;
    EXPECT_EQ(json::parse(r->body)["error"],
              std::string("since '") + bad + "' is not a time in milliseconds since the epoch");
  }
}

TEST_F(ServeTest, ExplainAnswersForKnownJobsAndRefusesBadNames) {
  auto eng = Recover(db_);
  ASSERT_TRUE(eng);
  auto r = Get("/api/jobs/resnet-50/explain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  auto ex = eng->Explain("resnet-50");
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(json::parse(r->body), json::parse(ExplanationJson(*ex)));
  EXPECT_EQ(json::parse(r->body)["queue"], "root/training/vision");

  struct Case {
    std::string path;
    int status;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"/api/jobs/no-such-job/explain", 404, "job no-such-job: unknown job"},
           {"/api/jobs/a%2Fb/explain", 404, "job a/b: unknown job"},  // a name with '/' is looked up
           {"/api/jobs//explain", 400, "empty job name"},
           {"/api/jobs/bad%01name/explain", 400, "job name with a control character"},
           {"/api/jobs/" + std::string(1100, 'x') + "/explain", 400, "job name longer than 1024 bytes"},
       }) {
    auto b = Get(c.path);
    ASSERT_TRUE(b) << c.path;
    EXPECT_EQ(b->status, c.status) << c.path;
    EXPECT_EQ(b->get_header_value("Content-Type"), "application/json") << c.path;
    EXPECT_EQ(json::parse(b->body)["error"], c.error) << c.path;
  }
}

TEST_F(ServeTest, UnknownPathsAre404AndOtherMethods405) {
  for (const char* path : {"/nope", "/api/queues/x", "/metrics/", "/api/jobs/x"}) {
    auto r = Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_EQ(json::parse(r->body)["error"], std::string("no such path: ") + path);
  }
  auto c = ClientFor(server_->port());
  auto post = c->Post("/metrics");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  EXPECT_EQ(json::parse(post->body)["error"], "method POST not allowed on /metrics (GET, HEAD)");
  struct Case {
    httplib::Result result;
    int status;
  };
  std::vector<Case> cases;  // httplib::Result moves only: no initializer list
  cases.push_back({c->Post("/api/queues", "{\"x\": 1}", "application/json"), 405});  // a body, read first
  cases.push_back({c->Delete("/api/jobs/resnet-50/explain"), 405});
  cases.push_back({c->Options("/"), 405});
  cases.push_back({c->Put("/nope", "x", "text/plain"), 404});
  for (Case& k : cases) {
    ASSERT_TRUE(k.result);
    EXPECT_EQ(k.result->status, k.status) << k.result->body;
  }
  auto head = c->Head("/api/queues");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
  // The connection stays usable after a refused request.
  auto again = c->Get("/metrics");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

TEST_F(ServeTest, HistoryKeepsTheLastSamplesOfEachTopLevelQueue) {
  json h;
  ASSERT_TRUE(WaitFor([&] {
    auto r = Get("/api/history");
    if (!r || r->status != 200) return false;
    h = json::parse(r->body);
    return h["samples"].size() == 5;  // --history 5, a sample every 0.05 s
  })) << h.dump();
  EXPECT_EQ(h["capacity"], 5);
  auto eng = Recover(db_);
  ASSERT_TRUE(eng);
  const TreeSnapshot t = TakeTreeSnapshot(*eng);
  int64_t prev = 0;
  for (const json& s : h["samples"]) {
    EXPECT_GE(s["time_ms"].get<int64_t>(), prev);
    prev = s["time_ms"];
    EXPECT_EQ(s["last_seq"], eng->last_seq());
    ASSERT_EQ(s["queues"].size(), 3u);  // analytics, serving, training
    for (const QueueInfo& q : t.queues) {
      if (q.depth != 1) continue;
      EXPECT_EQ(s["queues"][q.path]["usage_share"], UsageShare(q, t.total)) << q.path;
      EXPECT_EQ(s["queues"][q.path]["share"], q.share) << q.path;
    }
  }
  // Held for a while, the ring stays at its capacity.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto r = Get("/api/history");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["samples"].size(), 5u);
}

// ---- the page, in headless Chromium ----

TEST_F(ServeTest, PageInHeadlessChromiumShowsTheQueueTree) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium; .ci/setup installs it)";
  auto page = Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  // Self-contained: nothing loaded from elsewhere (the SVG namespace URI is
  // a name, not a fetch).
  for (const char* ref : {"src=", "href=", "url(", "@import", "<link"})
    EXPECT_EQ(page->body.find(ref), std::string::npos) << ref;
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port()) + "/";
  const std::string dom = Chromium(chromium, dir_ + "/profile", url, "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("<table id=\"tree\">")) << dom.substr(0, 2000);
  // Every queue's row, the top-level queues' cards, the store and live status.
  for (const char* name : {"analytics", "adhoc", "reports", "training", "vision", "language", "serving"})
    EXPECT_THAT(dom, HasSubstr("</span>" + std::string(name) + "</td>")) << name;
  for (const char* name : {"analytics", "training", "serving"})
    EXPECT_THAT(dom, HasSubstr("<span class=\"nm\">" + std::string(name) + "</span>")) << name;
  EXPECT_THAT(dom, HasSubstr(db_));
  EXPECT_THAT(dom, HasSubstr("5.72Ti"));
  EXPECT_THAT(dom, HasSubstr("<div id=\"status\" class=\"live\">"));
  EXPECT_THAT(dom, HasSubstr("<polyline"));  // the sparklines
  // The Share and Key cells say why: root's share is 0 because training's
  // is, whose is 0 because language has a waiting job that holds nothing.
  EXPECT_THAT(dom, HasSubstr("<p class=\"legend\">"));
  EXPECT_THAT(dom, HasSubstr("title=\"0 because root/training has share 0 and is not blocked: under Dynamic H-DRF"));
  EXPECT_THAT(dom, HasSubstr("title=\"0 because a job of root/training/language that holds nothing is not blocked "
                             "(1 waiting)"));
  EXPECT_THAT(dom, HasSubstr("title=\"key = share / weight = 0.5 / 2 = 0.25; among the children of root/training"));
  // A screenshot of the same page (HDRF_SERVE_SCREENSHOT keeps a copy).
  const char* keep = std::getenv("HDRF_SERVE_SCREENSHOT");
  const std::string png = keep ? keep : dir_ + "/page.png";
  Chromium(chromium, dir_ + "/profile", url, "--screenshot='" + png + "'");
  const std::string bytes = Slurp(png);
  EXPECT_THAT(bytes, StartsWith("\x89PNG\r\n\x1a\n"));
  EXPECT_GT(bytes.size(), 20000u);
}

// ---- lifecycle and flags ----

TEST(ServeCommand, FollowsTheStoreWhileAWriterWritesIt) {
  const std::string dir = TempDir();
  const std::string db = dir + "/store";
  MakeStore(db);
  Serve s({"--db", db, "--listen", "127.0.0.1:0", "--refresh", "0.05"}, dir + "/serve.err");
  ASSERT_GT(s.port(), 0) << s.err();
  auto queues = [&] {
    auto r = ClientFor(s.port())->Get("/api/queues");
    return r && r->status == 200 ? json::parse(r->body) : json();
  };
  const uint64_t before = queues()["last_seq"];
  {
    // A writer opens the store and adds a job: while it holds the store,
    // the server (a follower) shows the new job.
    EngineOptions o;
    o.db_path = db;
    auto w = Engine::Open(o);
    ASSERT_TRUE(w.ok()) << w.status().message();
    JobSpec late;
    late.name = "late-job";
    late.queue = "root/serving";
    late.tasks = 2;
    late.task = {{"cpu", 1000}};
    auto ref = (*w)->Submit(late);
    ASSERT_TRUE(ref.ok());
    ASSERT_TRUE((*w)->Allocate(*ref, 2).ok());
    json j;
    EXPECT_TRUE(WaitFor([&] {
      j = queues();
      return j.is_object() && j["job_count"] == 7 && j["last_seq"] == before + 2;
    })) << j.dump();
    EXPECT_TRUE(j["refresh_error"].is_null()) << j.dump();
    auto live = ClientFor(s.port())->Get("/api/jobs/late-job/explain");
    ASSERT_TRUE(live);
    EXPECT_EQ(live->status, 200);
    auto metrics = ClientFor(s.port())->Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_THAT(metrics->body, HasSubstr("hdrf_follower_lag_events"));
    ASSERT_TRUE((*w)->Close().ok());
  }
  json j;
  EXPECT_TRUE(WaitFor([&] {
    j = queues();
    return j.is_object() && j["refresh_error"].is_null() && j["job_count"] == 7;
  })) << j.dump();
  EXPECT_EQ(j["last_seq"], before + 2);
  auto explain = ClientFor(s.port())->Get("/api/jobs/late-job/explain");
  ASSERT_TRUE(explain);
  EXPECT_EQ(explain->status, 200);
  EXPECT_EQ(s.Stop(SIGTERM), 0) << s.err();
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(ServeCommand, SigintAndSigtermStopItCleanly) {
  const std::string dir = TempDir();
  MakeStore(dir + "/store");
  for (int sig : {SIGINT, SIGTERM}) {
    Serve s({"--db", dir + "/store", "--listen", "127.0.0.1:0"}, dir + "/serve.err");
    ASSERT_GT(s.port(), 0) << s.err();
    // A client holding a keep-alive connection does not keep it running.
    auto c = ClientFor(s.port());
    c->set_keep_alive(true);
    auto r = c->Get("/api/queues");
    ASSERT_TRUE(r);
    const auto t0 = Clock::now();
    EXPECT_EQ(s.Stop(sig), 0) << sig;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
    EXPECT_THAT(s.err(), HasSubstr("hdrf serve: stopped"));
  }
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(ServeCommand, BadFlagsExitTwoAndAMissingStoreOne) {
  ASSERT_NE(std::getenv("HDRF_BIN"), nullptr);
  const std::string dir = TempDir();
  MakeStore(dir + "/store");
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  Serve busy({"--db", dir + "/store", "--listen", "127.0.0.1:0"}, dir + "/busy.err");
  ASSERT_GT(busy.port(), 0);
  const std::string db = dir + "/store";
  for (const Case& c : std::vector<Case>{
           {{"--listen", "127.0.0.1:0"}, 2, "--db is required"},
           {{"--db", db, "--listen", "localhost"}, 2, "--listen 'localhost': expected HOST:PORT"},
           {{"--db", db, "--listen", "127.0.0.1:65536"}, 2, "port '65536' is not a number in 0..65535"},
           {{"--db", db, "--listen", "127.0.0.1:-1"}, 2, "port '-1' is not a number in 0..65535"},
           {{"--db", db, "--listen", "example.com:80"}, 2, "host 'example.com' is not an IPv4 or IPv6 address"},
           {{"--db", db, "--listen", "[::1:80"}, 2, "an IPv6 host goes in brackets"},
           {{"--db", db, "--refresh", "0"}, 2, "--refresh"},
           {{"--db", db, "--bogus"}, 2, "--bogus"},
           {{"--db", dir + "/nostore", "--listen", "127.0.0.1:0"}, 1, "no store at " + dir + "/nostore"},
           {{"--db", db, "--listen", "127.0.0.1:" + std::to_string(busy.port())}, 1,
            "cannot listen on 127.0.0.1:" + std::to_string(busy.port())},
       }) {
    Serve s(c.args, dir + "/serve.err");
    EXPECT_EQ(s.port(), 0);
    EXPECT_EQ(s.Wait(10), c.code) << c.args.back();
    EXPECT_THAT(s.err(), HasSubstr(c.message)) << c.args.back();
  }
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace hdrf::tools
