// A workflow series end to end: benchfleet-agent runs an allow-listed command (tests/sim's
// workflow-standin, which holds a known amount of memory) 5 times, streams the records to a
// coordinator process and PostgreSQL; the peak memory is found within 10% and labelled with its
// kind (a cgroup's peak where the agent can make one, else rusage; for a container, docker stats
// sampled, through a docker CLI stand-in that reads the container process's VmRSS: no Docker daemon
// here). Also: a command outside the allow-list is refused before anything runs, and a hung
// command is killed at its deadline.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

constexpr absl::Duration kSeriesTimeout = absl::Seconds(180);
constexpr int kAllocMiB = 200;
constexpr int kPrompts = 10;

int WaitFor(Subprocess& p, absl::Duration timeout) {
  if (!PollUntil([&] { return !p.running(); }, timeout)) p.Signal(SIGKILL);
  return p.Wait();
}

std::vector<int> ProcessesWith(const std::string& needle) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  while (dirent* e = proc ? ::readdir(proc) : nullptr) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::string cmdline = ReadAll(absl::StrCat("/proc/", pid, "/cmdline"));
    if (cmdline.find(needle) != std::string::npos) pids.push_back(pid);
  }
  if (proc) ::closedir(proc);
  return pids;
}

// True where the agent, run by this user, can make a cgroup v1 memory cgroup (the build machine:
// root, cgroup v1). Elsewhere auto falls back to rusage, which the test then expects.
bool CgroupV1Usable() {
  return ::geteuid() == 0 && ::access("/sys/fs/cgroup/memory/memory.max_usage_in_bytes", F_OK) == 0;
}

class WorkflowSeriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = MakeTempDir("workflow");
    prompts_ = work_ + "/prompts.jsonl";
    std::ofstream prompts(prompts_);
    for (int i = 1; i <= kPrompts; ++i) {
      prompts << "{\"id\": \"q" << i << "\", \"prompt\": \"Explain in one sentence what item " << i << " is.\"}\n";
    }
    config_ = work_ + "/agent.yaml";
    const std::string standin = BinaryPath("workflow-standin");
    std::ofstream(config_) << "state_dir: " << work_ << "/state\n"
                           << "allow:\n  backends: [workflow]\n"
                           << "  workflow_dirs: [" << work_ << "]\n"
                           << "  commands:\n"
                           << "    standin:\n"
                           << "      argv: [" << standin << ", --prompts, '{prompts}', --output, '{output}',"
                           << " --alloc-mib, '" << kAllocMiB << "', --ms-per-request, '20', --tokens, '24']\n"
                           << "      env: [ACCELERATOR]\n"
                           << "    standin-hang:\n"
                           << "      argv: [" << standin << ", --prompts, '{prompts}', --output, '{output}', --hang]\n"
                           << "    standin-docker:\n"
                           << "      argv: [" << work_ << "/bin/docker, run, --rm, --name, '{container}', 'workflow:6', "
                           << standin << ", --prompts, '{prompts}', --output, '{output}', --alloc-mib, '" << kAllocMiB
                           << "', --ms-per-request, '100', --tokens, '24']\n"
                           << "      env: [ACCELERATOR]\n";
    // A docker CLI stand-in: `run ... --name NAME IMAGE CMD...` notes its pid under NAME and execs
    // CMD (so the "container" is that process); `stats ... NAME` prints that process's VmRSS in the
    // `{{json .}}` format of docker stats; `kill NAME` signals it.
    ::mkdir((work_ + "/bin").c_str(), 0755);
    ::mkdir((work_ + "/docker-state").c_str(), 0755);
    std::ofstream(work_ + "/bin/docker") << "#!/bin/sh\nstate='" << work_ << "/docker-state'\n" << R"sh(case "$1" in
  run)
    shift
    while [ $# -gt 0 ]; do
      case "$1" in
        --rm) shift ;;
        --name) name=$2; shift 2 ;;
        *) break ;;
      esac
    done
    shift
    echo $$ > "$state/$name.pid"
    exec "$@" ;;
  stats)
    for last; do :; done
    pid=$(cat "$state/$last.pid" 2>/dev/null)
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    if [ -z "$pid" ] || [ -z "$rss" ]; then
      echo "Error response from daemon: No such container: $last" >&2
      exit 1
    fi
    printf '{"BlockIO":"0B / 0B","Container":"%s","MemUsage":"%sKiB / 62.79GiB","Name":"%s","PIDs":"1"}
' "$last" "$rss" "$last" ;;
  kill) kill "$(cat "$state/$2.pid")" ;;
  *) echo "fake docker: $*" >&2; exit 2 ;;
esac
)sh";
    ::chmod((work_ + "/bin/docker").c_str(), 0755);
  }

  std::string WriteSpec(const std::string& name, const std::string& command, const std::string& extra,
                        int repetitions) {
    const std::string path = work_ + "/" + name + ".yaml";
    std::ofstream(path) << "series: " << name << "\n"
                        << "task: explain-one-sentence\n"
                        << "backend: workflow\n"
                        << "workflow:\n"
                        << "  command: " << command << "\n"
                        << "  prompts: " << prompts_ << "\n"
                        << extra << "runs:\n  cold: 1\n  repetitions: " << repetitions << "\n";
    return path;
  }

  std::unique_ptr<Subprocess> Run(const std::string& name, const std::string& spec, const std::string& coordinator = "") {
    std::vector<std::string> args = {"run", spec, "--config", config_, "--out", work_ + "/series-" + name};
    if (!coordinator.empty()) args.insert(args.end(), {"--coordinator", coordinator});
    return StartAgent(work_, "run-" + name, args);
  }

  std::string work_;
  std::string prompts_;
  std::string config_;
};

TEST_F(WorkflowSeriesTest, FiveRepetitionsThroughTheCoordinatorWithPeakMemoryOfEachKind) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorProcess coordinator(db.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  const std::string env = "  env: {ACCELERATOR: none}\n  deadline: 60s\n";
  auto cgroup_run = Run("auto", WriteSpec("auto", "standin", env + "  memory: auto\n", 5), coordinator.address());
  ASSERT_EQ(WaitFor(*cgroup_run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-auto.log");
  auto rusage_run = Run("rusage", WriteSpec("rusage", "standin", env + "  memory: rusage\n", 5), coordinator.address());
  ASSERT_EQ(WaitFor(*rusage_run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-rusage.log");

  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs"), "10");
  for (const std::string series : {"auto", "rusage"}) {
    const std::string where = absl::StrCat(" FROM runs WHERE series_id = '", series, "'");
    EXPECT_EQ(db.QueryValue("SELECT string_agg(mode || ':' || phase || ':' || repetition, ',' ORDER BY repetition)" + where),
              "none:cold:1,none:cold:2,none:cold:3,none:cold:4,none:cold:5")
        << series;
    EXPECT_EQ(db.QueryValue("SELECT count(*)" + where + " AND status = 'ok' AND simulated AND backend = 'workflow'"), "5");
    // Every request of every repetition is kept, not only the summary.
    EXPECT_EQ(db.QueryValue("SELECT sum(jsonb_array_length(record->'requests'))" + where),
              absl::StrCat(5 * kPrompts));
    EXPECT_EQ(db.QueryValue("SELECT count(*)" + where + " AND record->'requests'->0->>'prompt_id' = 'q1'"), "5");
    EXPECT_EQ(db.QueryValue("SELECT count(*)" + where + " AND metrics ? 'latency_mean_seconds' AND "
                            "metrics ? 'latency_p50_seconds' AND metrics ? 'latency_p90_seconds' AND "
                            "metrics ? 'latency_p99_seconds' AND metrics ? 'output_tokens_per_second' AND "
                            "metrics ? 'requests_per_second'"),
              "5");
    // The peak, within 10% of what the stand-in held, on every repetition.
    EXPECT_EQ(db.QueryValue(absl::StrCat("SELECT count(*)", where, " AND abs((record->'memory'->0->>'bytes')::bigint - ",
                                         int64_t{kAllocMiB} << 20, ") <= ", (int64_t{kAllocMiB} << 20) / 10)),
              "5")
        << db.QueryValue("SELECT string_agg(record->'memory'->0->>'bytes', ',')" + where);
  }
  const bool cgroup = CgroupV1Usable();
  EXPECT_EQ(db.QueryValue(absl::StrCat("SELECT count(*) FROM runs WHERE series_id = 'auto' AND "
                                       "record->'memory'->0->>'kind' = '",
                                       cgroup ? "MEMORY_KIND_CONTAINER_PEAK" : "MEMORY_KIND_PROCESS_PEAK_RSS",
                                       "' AND jsonb_array_length(record->'memory') = 1")),
            "5");
  if (cgroup) {
    EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE series_id = 'auto' AND "
                            "record->'memory'->0->>'scope' LIKE 'cgroup v1 %' AND "
                            "record->'memory'->0->>'source' LIKE '%/memory.max_usage_in_bytes'"),
              "5");
  }
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE series_id = 'rusage' AND "
                          "record->'memory'->0->>'kind' = 'MEMORY_KIND_PROCESS_PEAK_RSS' AND "
                          "record->'memory'->0->>'source' = 'wait4 ru_maxrss of the children: the largest process "
                          "of the tree, not their sum'"),
            "5");
  // No cgroup of ours is left behind.
  if (cgroup) {
    EXPECT_EQ(ReadAll("/proc/self/cgroup").find("benchfleet-workflow"), std::string::npos);
  }
  EXPECT_TRUE(ProcessesWith(prompts_).empty());
}

// The command starts a container the agent names ({container}): its peak comes from the runtime,
// sampled, within 10% of what the stand-in held, and labelled as sampled.
TEST_F(WorkflowSeriesTest, AContainersPeakFromDockerStatsThroughTheCoordinator) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorProcess coordinator(db.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  auto run = Run("docker",
                 WriteSpec("docker", "standin-docker",
                           "  env: {ACCELERATOR: none}\n  deadline: 60s\n  container_sample_period: 100ms\n", 5),
                 coordinator.address());
  ASSERT_EQ(WaitFor(*run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-docker.log");
  const std::string where = " FROM runs WHERE series_id = 'docker'";
  EXPECT_EQ(db.QueryValue("SELECT count(*)" + where + " AND status = 'ok'"), "5");
  EXPECT_EQ(db.QueryValue("SELECT count(*)" + where +
                          " AND jsonb_array_length(record->'memory') = 1"
                          " AND record->'memory'->0->>'kind' = 'MEMORY_KIND_CONTAINER_PEAK'"
                          " AND record->'memory'->0->>'scope' LIKE 'docker container benchfleet-%'"
                          " AND record->'memory'->0->>'source' LIKE 'docker stats --no-stream MemUsage, sampled: "
                          "the highest of % samples taken every 0.1 s or more while the command ran; a spike between "
                          "two samples is missed, so the true peak can be higher'"),
            "5")
      << db.QueryValue("SELECT string_agg(record->>'memory', ' | ')" + where);
  EXPECT_EQ(db.QueryValue(absl::StrCat("SELECT count(*)", where, " AND abs((record->'memory'->0->>'bytes')::bigint - ",
                                       int64_t{kAllocMiB} << 20, ") <= ", (int64_t{kAllocMiB} << 20) / 10)),
            "5")
      << db.QueryValue("SELECT string_agg(record->'memory'->0->>'bytes', ',')" + where);
  // Each run named its own container.
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT record->'params'->>'container')" + where), "5");
  EXPECT_TRUE(ProcessesWith(prompts_).empty());
}

TEST_F(WorkflowSeriesTest, ACommandOutsideTheAllowListIsRefusedBeforeAnythingRuns) {
  auto run = Run("refused", WriteSpec("refused", "rm-rf", "", 1));
  EXPECT_EQ(WaitFor(*run, kSeriesTimeout), 2);
  const std::string log = ReadAll(work_ + "/run-refused.log");
  EXPECT_NE(log.find(absl::StrCat("command rm-rf is not in this agent's allow-list (allow.commands in ", config_,
                                  "); allow.commands lists: standin, standin-docker, standin-hang")),
            std::string::npos)
      << log;
  EXPECT_EQ(ReadAll(work_ + "/series-refused/runs.jsonl"), "");
}

TEST_F(WorkflowSeriesTest, AHungCommandIsKilledAtItsDeadline) {
  auto run = Run("hang", WriteSpec("hang", "standin-hang", "  deadline: 2s\n  stop_grace: 1s\n", 1));
  const int rc = WaitFor(*run, kSeriesTimeout);
  const std::string log = ReadAll(work_ + "/run-hang.log");
  EXPECT_EQ(rc, 1) << log;
  const std::string runs = ReadAll(work_ + "/series-hang/runs.jsonl");
  EXPECT_NE(runs.find("command standin-hang killed at its deadline of 2 s"), std::string::npos) << runs;
  EXPECT_NE(runs.find("workflow-standin: hanging (as asked)"), std::string::npos) << runs;
  EXPECT_TRUE(ProcessesWith(prompts_).empty()) << "a process of the hung command outlived its deadline";
}

}  // namespace
}  // namespace benchfleet::testing
