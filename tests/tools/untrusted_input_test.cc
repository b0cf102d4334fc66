// Untrusted input (issue 26) as a user meets it: the built hdrf binary
// (HDRF_BIN) on crafted files in a temporary directory. Each test is the
// regression test of one item: it fails on the code before the fix (an
// abort, a hang, a silently cut table, a forged job, exit 0 on a dropped
// job) and passes when the input is refused with a message naming what and
// where, and nothing is written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/run_shell.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Result = hdrf::testing::ShellResult;
using hdrf::testing::Slurp;

class Untrusted : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* bin = std::getenv("HDRF_BIN");
    ASSERT_NE(bin, nullptr) << "HDRF_BIN must name the hdrf binary";
    bin_ = bin;
    char tmpl[] = "/tmp/hdrf_untrusted_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  // `timeout` turns a hang into exit 124.
  static Result Run(const std::string& args) {
    return hdrf::testing::RunCaptured("timeout 20 '" + bin_ + "' " + args, dir_);
  }
  static std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  static std::string bin_, dir_;
};
std::string Untrusted::bin_, Untrusted::dir_;

const char kCluster[] = "kind: HierarchicalQueue\ncluster: {cpu: 8}\nspec:\n  queues:\n";

// Item 10: special files are refused at once, not read (bad_alloc on
// /dev/zero) nor waited on (a FIFO with no writer).
TEST_F(Untrusted, SpecialFilesAreRefused) {
  const std::string fifo = dir_ + "/fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = dir_ + "/zero.csv";
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  const std::string queues = Write("q.yaml", std::string(kCluster) + "    - {name: a}\n");
  struct Case {
    std::string args, message;
  };
  for (const Case& c : {
           Case{"queues --config /dev/zero", "/dev/zero: not a regular file (a character device)"},
           Case{"sim /dev/zero", "/dev/zero: not a regular file (a character device)"},
           Case{"queues --config " + fifo, fifo + ": not a regular file (a FIFO)"},
           Case{"queues --config " + dir_, dir_ + ": not a regular file (a directory)"},
           Case{"simulate --config " + queues + " --workload " + link, link + ": not a regular file (a character device)"},
           Case{"workload import --from volcano /dev/zero --out " + dir_ + "/w.csv", "/dev/zero: not a regular file"},
           Case{"trace info /dev/zero", "/dev/zero: not a regular file"},
       }) {
    const auto t0 = std::chrono::steady_clock::now();
    Result r = Run(c.args);
    EXPECT_EQ(r.code, 1) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << c.args;
  }
  EXPECT_NE(::access((dir_ + "/w.csv").c_str(), F_OK), 0);
}

// Item 9: names with a NUL, an ANSI escape, a newline or a blank are refused
// on every input path, and the message shows them escaped (no raw control
// byte reaches the terminal).
TEST_F(Untrusted, BadNamesAreRefusedAndShownEscaped) {
  struct Case {
    std::string file, bytes, args, message;
  };
  const std::string nul("a\0b", 3);
  for (const Case& c : {
           Case{"nul.yaml", std::string(kCluster) + "    - {name: \"a\\0b\"}\n", "queues --config ",
                ":5: queue name 'a\\x00b': byte 0x00 at byte 2 is not allowed"},
           Case{"rawnul.yaml", std::string(kCluster) + "    - {name: " + nul + "}\n", "queues --config ",
                ":5: a control character (byte 0x00) at column 15; YAML text cannot hold one"},
           Case{"ansi.yaml", std::string(kCluster) + "    - {name: \"a\\e[31mred\"}\n", "queues --config ",
                ":5: queue name 'a\\x1b[31mred': byte 0x1b at byte 2 is not allowed"},
           Case{"nl.yaml", "cluster: {cpu: 4}\njobs:\n  - {name: \"j\\nx\", queue: root}\n", "sim ",
                ":3: job name 'j\\x0ax': byte 0x0a at byte 2 is not allowed"},
           Case{"user.yaml", "cluster: {cpu: 4}\njobs:\n  - {name: j, user: \"bob smith\"}\n", "sim ",
                ":3: user name 'bob smith': a blank at byte 4 is not allowed"},
           Case{"blank.csv", "event,queue,capacity\ncluster,,cpu=4\nqueue,root/a b,\n", "trace import --out x.trace --from ",
                ":3: queue: queue path 'root/a b': queue name 'a b': a blank at byte 2 is not allowed"},
       }) {
    const std::string path = Write(c.file, c.bytes);
    Result r = Run(c.args + path);
    EXPECT_EQ(r.code, 1) << c.file << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(path + c.message)) << c.file;
    EXPECT_EQ(r.out, "") << c.file;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << c.file;
  }
  EXPECT_NE(::access((dir_ + "/x.trace").c_str(), F_OK), 0);
  // The same names are refused in a workload, with the line and the field.
  const std::string q = Write("wq.yaml", std::string(kCluster) + "    - {name: a}\n");
  const std::string w = Write("w.csv", "name,queue,arrival,duration,user,cpu\nok,root/a,0,1,u,1\n\"x\ty\",root/a,0,1,u,1\n");
  Result r = Run("simulate --config " + q + " --workload " + w);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr(w + ":3: name: job name 'x\\x09y': byte 0x09 at byte 2 is not allowed"));
}

// Item 7: a Volcano groupName cannot forge a workload line: names outside the
// name set are refused, and what is written is quoted as CSV, so a name
// starting with '#' is a job, not a comment.
TEST_F(Untrusted, VolcanoImportCannotForgeWorkloadLines) {
  const std::string ev = R"([
{"type": "PodCreated", "timestamp": "2025-01-01T00:00:00Z", "groupName": "x,root/prod/batch,0,100,evil,1000,1,512\ny", "replicas": 1, "queue": "a"}
])";
  const std::string out = dir_ + "/forged.csv";
  Result r = Run("workload import --from volcano " + Write("forged.json", ev) + " --out " + out);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("forged.json:2: event 1: groupName: job name 'x,root/prod/batch,0,100,evil,1000,1,512\\x0ay': "
                               "',' at byte 2 is not allowed"));
  EXPECT_NE(::access(out.c_str(), F_OK), 0);

  const std::string hash = R"([
{"type": "PodCreated", "timestamp": "2025-01-01T00:00:00Z", "groupName": "#h", "replicas": 2, "queue": "a", "resources": {"requests": {"cpu": "1"}}},
{"type": "PodCreated", "timestamp": "2025-01-01T00:00:01Z", "groupName": "g", "replicas": 1, "queue": "a", "resources": {"requests": {"cpu": "1"}}},
{"type": "PodDeleted", "timestamp": "2025-01-01T00:00:09Z", "groupName": "#h"}
])";
  const std::string csv = dir_ + "/hash.csv";
  r = Run("workload import --from volcano " + Write("hash.json", hash) + " --out " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(Slurp(csv), HasSubstr("\n\"#h\",root/a,0.000,9.000,default,2,1,1\n"));
  const std::string q = Write("hq.yaml", std::string(kCluster) + "    - {name: a}\n");
  r = Run("simulate --config " + q + " --workload " + csv + " --json --jobs-out " + dir_ + "/jobs.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("{\"jobs\":2,")) << r.out;  // "#h" is a job, not a comment
  EXPECT_THAT(Slurp(dir_ + "/jobs.csv"), HasSubstr("\n\"#h\",root/a,0.000,0.000,0.000,9.000\n"));
}

// Item 11: float flags refuse NaN, infinities and values whose conversion
// to milliseconds would overflow (before: the job was dropped with a warning
// and the exit code was 0).
TEST_F(Untrusted, FloatFlagsRefuseNanInfinityAndHugeValues) {
  const std::string ev = Write("ev.json", R"([{"type": "PodCreated", "timestamp": "2025-01-01T00:00:00Z", "groupName": "g", "replicas": 1}])");
  for (const char* v : {"nan", "inf", "-1", "9.3e15"}) {
    const std::string out = dir_ + "/open.csv";
    Result r = Run("workload import --from volcano " + ev + " --out " + out + " --open-duration " + v);
    EXPECT_EQ(r.code, 2) << v << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("--open-duration: '" + std::string(v) + "' is not a number in 0..1e+09")) << v;
    EXPECT_NE(::access(out.c_str(), F_OK), 0) << v;
  }
  for (const char* args : {"workload gen --rate nan --jobs 1", "workload gen --queue-skew inf --jobs 1",
                                  "workload gen --max-duration nan --jobs 1", "workload gen --load nan --jobs 1",
                                  "standby --db x --wait-seconds nan", "standby --db x --status-seconds inf"}) {
    Result r = Run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("is not a number in")) << args;
  }
}

}  // namespace
