// A partition longer than a task's lease, on a real network: the coordinator (in process, real
// PostgreSQL, a 2 s lease) listens on the root side of a veth pair, a real `benchfleet-agent
// serve` runs in a network namespace on the other side against the llama-server simulator, and
// the link goes down for 3 leases while the task runs, then up. Every run must be stored once (no
// (phase, call_index) twice for the task) and the task must end once, SUCCEEDED, though the
// coordinator retried it meanwhile (attempt > 1). Needs root and `ip` (iproute2); skipped with a
// clear message otherwise. Only a private 10.x pair and the namespace's loopback are used.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/server.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_test_db.h"
#include "tests/support/subprocess.h"

namespace benchfleet::testing {
namespace {

using coordinator::CoordinatorServer;
using coordinator::CoordinatorServerOptions;

constexpr absl::Duration kLease = absl::Seconds(2);
constexpr absl::Duration kPartition = absl::Seconds(6);  // 3 leases
constexpr int kWarmRuns = 11;                             // + 1 cold: 12 runs of ~0.4 s each

// The path of iproute2's `ip`, or "" when it is not installed.
std::string IpPath() {
  for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "";
}

// Runs `ip ARGS` quietly; returns its exit code.
int Ip(const std::string& ip, const std::string& args) {
  return std::system(absl::StrCat(ip, " ", args, " >/dev/null 2>&1").c_str()) == 0 ? 0 : 1;
}

// A network namespace joined to the root one by a veth pair: 10.201.N.1 here, 10.201.N.2 there.
class Partitionable {
 public:
  explicit Partitionable(std::string ip) : ip_(std::move(ip)) {
    const int n = static_cast<int>(::getpid() % 250) + 1;
    ns_ = absl::StrCat("bfpart", ::getpid());
    root_if_ = absl::StrCat("bfr", ::getpid() % 100000);
    ns_if_ = absl::StrCat("bfn", ::getpid() % 100000);
    root_address_ = absl::StrCat("10.201.", n, ".1");
    ns_address_ = absl::StrCat("10.201.", n, ".2");
  }
  ~Partitionable() {
    if (made_) {
      Ip(ip_, absl::StrCat("netns del ", ns_));  // takes the pair with it
      Ip(ip_, absl::StrCat("link del ", root_if_));
    }
  }

  // Returns "" once made, else what failed.
  std::string Make() {
    if (Ip(ip_, absl::StrCat("netns add ", ns_)) != 0) return absl::StrCat("ip netns add ", ns_, " failed");
    made_ = true;
    const std::vector<std::string> steps = {
        absl::StrCat("link add ", root_if_, " type veth peer name ", ns_if_),
        absl::StrCat("link set ", ns_if_, " netns ", ns_),
        absl::StrCat("addr add ", root_address_, "/24 dev ", root_if_),
        absl::StrCat("link set ", root_if_, " up"),
        absl::StrCat("-n ", ns_, " addr add ", ns_address_, "/24 dev ", ns_if_),
        absl::StrCat("-n ", ns_, " link set ", ns_if_, " up"),
        absl::StrCat("-n ", ns_, " link set lo up"),
    };
    for (const std::string& step : steps) {
      if (Ip(ip_, step) != 0) return absl::StrCat("ip ", step, " failed");
    }
    return "";
  }

  // The namespace's end of the link goes down (its route to the coordinator goes with it) or up.
  bool SetLink(bool up) { return Ip(ip_, absl::StrCat("-n ", ns_, " link set ", ns_if_, up ? " up" : " down")) == 0; }

  // argv prefix that runs a program inside the namespace.
  std::vector<std::string> Exec() const { return {ip_, "netns", "exec", ns_}; }
  const std::string& root_address() const { return root_address_; }

 private:
  std::string ip_;
  std::string ns_, root_if_, ns_if_, root_address_, ns_address_;
  bool made_ = false;
};

std::string WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// Returns how many times `what` occurs in `text`.
int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(FleetPartitionTest, APartitionLongerThanTheLeaseStoresEveryRunOnceAndEndsTheTaskOnce) {
  if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED: making a network namespace needs root (this test runs as uid "
                                     << ::geteuid() << ")";
  const std::string ip = IpPath();
  if (ip.empty()) GTEST_SKIP() << "SKIPPED: iproute2's `ip` is not installed: no network namespace can be made";
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  Partitionable net(ip);
  if (const std::string failed = net.Make(); !failed.empty()) {
    GTEST_SKIP() << "SKIPPED: cannot make a network namespace here: " << failed;
  }

  CoordinatorServerOptions options;
  options.listen_address = net.root_address() + ":0";
  options.database_url = db.url();
  options.lease = kLease;
  options.tick_interval = absl::Milliseconds(200);
  CoordinatorServer server(options);
  ASSERT_TRUE(server.Start().ok());

  const std::string work = MakeTempDir("partition");
  const std::string models = work + "/models";
  ::mkdir(models.c_str(), 0755);
  const std::string model = WriteFile(models + "/qwen2.5-3b-instruct-q4_k_m.gguf", "GGUF simulated model file");
  const std::string sim = BinaryPath("llama-server-sim");
  const std::string config = WriteFile(
      work + "/agent.yaml", absl::StrCat("state_dir: ", work, "/state\nlabels:\n  class: partitioned\n",
                                         "plaintext: true\n",  // the coordinator is on 10.201.N.1, not loopback
                                         "allow:\n  backends: [llama-server]\n  executables: [", sim, "]\n",
                                         "  model_dirs: [", models, "]\n"));
  std::vector<std::string> argv = net.Exec();
  for (const std::string& a : {BinaryPath("benchfleet-agent"), std::string("serve"), std::string("--config"), config,
                               std::string("--coordinator"), server.address()}) {
    argv.push_back(a);
  }
  const std::string log = work + "/serve.log";
  Subprocess agent(argv, {}, log);
  ASSERT_TRUE(PollUntil([&] { return db.QueryValue("SELECT count(*) FROM machines") == "1"; }, absl::Seconds(30)))
      << ReadAll(log);

  const std::string spec = absl::StrCat("series: partitioned-llama\n"
                                        "task: llama-partition\n"
                                        "backend: llama-server\n"
                                        "llama-server:\n"
                                        "  binary: ", sim, "\n"
                                        "  model: ", model, "\n"
                                        "  args: [-c, '256', --sim-load-ms, '100', --sim-gpu-tps, '20']\n"
                                        "  modes: {gpu: [-ngl, '99']}\n"
                                        "  prompt: Explain in one sentence what a GPU is.\n"
                                        "  n_predict: 8\n"
                                        "  seed: 42\n"
                                        "  health_timeout: 10s\n"
                                        "  request_timeout: 5s\n"
                                        "  stop_grace: 2s\n"
                                        "targets: {labels: [class=partitioned]}\n"
                                        "retry: {max_attempts: 50}\n"
                                        "runs:\n  cold: 1\n  warm: ", kWarmRuns, "\n");
  v1::SubmitSeriesRequest request;
  request.set_spec_yaml(spec);
  request.set_source_name("partition.yaml");
  absl::StatusOr<v1::SubmitSeriesResponse> submitted = server.scheduler()->Submit(request);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const std::string series_id = submitted->series_id();
  const std::string task_row = absl::StrCat("FROM tasks WHERE series_id = '", series_id, "'");

  // Cut the link once two runs are stored: the rest of the task runs while the agent is cut off.
  ASSERT_TRUE(PollUntil([&] { return std::stoi(db.QueryValue("SELECT count(*) FROM runs")) >= 2; }, absl::Seconds(60)))
      << ReadAll(log);
  ASSERT_TRUE(net.SetLink(false));
  const absl::Time cut = absl::Now();
  // The coordinator retries the task while the agent cannot hear it (a real wait: the lease and
  // the partition are real time).
  EXPECT_TRUE(PollUntil([&] { return db.QueryValue("SELECT attempt " + task_row) != "1"; }, kLease * 3))
      << db.QueryValue("SELECT state || ' ' || attempt " + task_row);
  absl::SleepFor(std::max(kPartition - (absl::Now() - cut), absl::ZeroDuration()));
  ASSERT_TRUE(net.SetLink(true));

  const std::string runs_total = std::to_string(1 + kWarmRuns);
  ASSERT_TRUE(PollUntil([&] { return db.QueryValue("SELECT state " + task_row) == "SUCCEEDED"; }, absl::Seconds(30)))
      << db.QueryValue("SELECT state || ' attempt ' || attempt || ' ' || message " + task_row) << "\n"
      << ReadAll(log);
  ASSERT_TRUE(PollUntil([&] { return db.QueryValue("SELECT count(*) FROM runs") == runs_total; }, absl::Seconds(20)))
      << db.QueryValue("SELECT count(*) FROM runs") << "\n" << ReadAll(log);

  // Each run once: 12 rows, 12 distinct (phase, call_index), all of the one task.
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs"), runs_total);
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM (SELECT DISTINCT task_id, phase, call_index FROM runs) d"), runs_total);
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT task_id) FROM runs"), "1");
  // The task ended once: SUCCEEDED at a later attempt with every run counted, and the agent ran
  // its series once (one "accepted", one "finished" in its log).
  EXPECT_NE(db.QueryValue("SELECT attempt " + task_row), "1");
  EXPECT_EQ(db.QueryValue("SELECT runs_done " + task_row), runs_total);
  const std::string agent_log = ReadAll(log);
  EXPECT_EQ(Count(agent_log, " accepted: series "), 1) << agent_log;
  EXPECT_EQ(Count(agent_log, " finished: "), 1) << agent_log;
  ASSERT_GT(db.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  // Every record is attempt 1's, whose runner made it; the agent heard of a later attempt (one
  // or more: the coordinator retries every lease while the link is down) and ran nothing again.
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE record->>'task_attempt' = '1'"), runs_total);
  EXPECT_GE(Count(agent_log, "takes over running attempt 1") + Count(agent_log, "answered with its outcome"), 1)
      << agent_log;

  agent.Signal(SIGTERM);
  EXPECT_EQ(agent.Wait(), 0) << ReadAll(log);
  server.Shutdown();
}

}  // namespace
}  // namespace benchfleet::testing
