// A workflow series end to end: benchfleet-agent runs an allow-listed command (tests/sim's
// workflow-standin, which holds a known amount of memory) 5 times, streams the records to a
// coordinator process and PostgreSQL; the peak memory is found within 10% and labelled with its
// kind (a cgroup's peak where the agent can make one, else rusage; for a container, docker stats
// sampled, through a docker CLI stand-in that reads the container process's VmRSS: no Docker daemon
// here). Also: a command outside the allow-list is refused before anything runs, a hung
// command is killed at its deadline, a reused container gives one COLD run and WARM ones, and
// examples/series/workflow-v6.yaml runs as written (its prompts copied) against the stand-in.
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
                           << "      env: [ACCELERATOR]\n"
                           // A reused container: started once per session, each run executed in it.
                           << "    standin-up:\n"
                           << "      argv: [" << work_ << "/bin/docker, run, -d, --name, '{container}', 'workflow:6', "
                           << "sleep, infinity]\n"
                           << "    standin-exec:\n"
                           << "      argv: [" << work_ << "/bin/docker, exec, '{container}', " << standin
                           << ", --prompts, '{prompts}', --output, '{output}', --alloc-mib, '" << kAllocMiB
                           << "', --ms-per-request, '100', --tokens, '24']\n";
    // A docker CLI stand-in: `run ... --name NAME IMAGE CMD...` notes its pid under NAME and execs
    // CMD (so the "container" is that process); `run -d` only notes that NAME runs; `exec NAME
    // CMD...` (NAME running) notes its pid and execs CMD; `stats ... NAME` prints that process's
    // VmRSS in the `{{json .}}` format of docker stats; `kill NAME` signals it; `rm -f NAME` notes
    // NAME in removed.
    ::mkdir((work_ + "/bin").c_str(), 0755);
    ::mkdir((work_ + "/docker-state").c_str(), 0755);
    std::ofstream(work_ + "/bin/docker") << "#!/bin/sh\nstate='" << work_ << "/docker-state'\n" << R"sh(case "$1" in
  run)
    shift
    detach=0
    while [ $# -gt 0 ]; do
      case "$1" in
        --rm) shift ;;
        -d) detach=1; shift ;;
        --name) name=$2; shift 2 ;;
        *) break ;;
      esac
    done
    shift
    if [ "$detach" = 1 ]; then touch "$state/$name.running"; echo 4c0fe3d2a1b6; exit 0; fi
    echo $$ > "$state/$name.pid"
    exec "$@" ;;
  exec)
    name=$2; shift 2
    [ -e "$state/$name.running" ] || { echo "Error response from daemon: No such container: $name" >&2; exit 1; }
    echo $$ > "$state/$name.pid"
    exec "$@" ;;
  rm) rm -f "$state/$3.running" "$state/$3.pid"; echo "$3" >> "$state/removed" ;;
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
  ASSERT_EQ(db.FillRecordJson(), 10);  // the JSON of the stored records, for SQL
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
    EXPECT_EQ(db.QueryValue(absl::StrCat("SELECT count(*)", where, " AND abs((memory->0->>'bytes')::bigint - ",
                                         int64_t{kAllocMiB} << 20, ") <= ", (int64_t{kAllocMiB} << 20) / 10)),
              "5")
        << db.QueryValue("SELECT string_agg(memory->0->>'bytes', ',')" + where);
  }
  const bool cgroup = CgroupV1Usable();
  EXPECT_EQ(db.QueryValue(absl::StrCat("SELECT count(*) FROM runs WHERE series_id = 'auto' AND "
                                       "memory->0->>'kind' = '",
                                       cgroup ? "MEMORY_KIND_CONTAINER_PEAK" : "MEMORY_KIND_PROCESS_PEAK_RSS",
                                       "' AND jsonb_array_length(memory) = 1")),
            "5");
  if (cgroup) {
    EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE series_id = 'auto' AND "
                            "memory->0->>'scope' = 'cgroup' AND "
                            "memory->0->>'source' LIKE '%/memory.max_usage_in_bytes (cgroup v1 %)'"),
              "5");
  }
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE series_id = 'rusage' AND "
                          "memory->0->>'kind' = 'MEMORY_KIND_PROCESS_PEAK_RSS' AND "
                          "memory->0->>'source' = 'wait4 ru_maxrss of the children: the largest process "
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
                          " AND jsonb_array_length(memory) = 1"
                          " AND memory->0->>'kind' = 'MEMORY_KIND_CONTAINER_PEAK'"
                          // One scope for the 5 repetitions; each run's container named in its source.
                          " AND memory->0->>'scope' = 'container'"
                          " AND memory->0->>'source' LIKE 'docker stats --no-stream MemUsage of container "
                          "benchfleet-%, sampled: the highest of % samples taken every 0.1 s or more while the "
                          "command ran; a spike between two samples is missed, so the true peak can be higher'"),
            "5")
      << db.QueryValue("SELECT string_agg(memory::text, ' | ')" + where);
  EXPECT_EQ(db.QueryValue(absl::StrCat("SELECT count(*)", where, " AND abs((memory->0->>'bytes')::bigint - ",
                                       int64_t{kAllocMiB} << 20, ") <= ", (int64_t{kAllocMiB} << 20) / 10)),
            "5")
      << db.QueryValue("SELECT string_agg(memory->0->>'bytes', ',')" + where);
  ASSERT_GT(db.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  // Each run named its own container.
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT record->'params'->>'container')" + where), "5");
  EXPECT_TRUE(ProcessesWith(prompts_).empty());
}

// container: reuse with runs {cold: 1, warm: 4}: one container for the session, started by the
// allow-listed start command; the first run COLD, the four others WARM, each with the container's
// peak; the container removed at the end.
TEST_F(WorkflowSeriesTest, AReusedContainerGivesOneColdRunThenWarmRuns) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorProcess coordinator(db.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  const std::string spec = work_ + "/reuse.yaml";
  std::ofstream(spec) << "series: reuse\ntask: explain-one-sentence\nbackend: workflow\n"
                      << "workflow:\n  command: standin-exec\n  prompts: " << prompts_ << "\n"
                      << "  container: reuse\n  start: standin-up\n  deadline: 60s\n  container_sample_period: 100ms\n"
                      << "runs:\n  cold: 1\n  warm: 4\n";
  auto run = Run("reuse", spec, coordinator.address());
  ASSERT_EQ(WaitFor(*run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-reuse.log");
  const std::string where = " FROM runs WHERE series_id = 'reuse'";
  EXPECT_EQ(db.QueryValue("SELECT string_agg(phase || ':' || call_index, ',' ORDER BY start_time)" + where),
            "cold:1,warm:1,warm:2,warm:3,warm:4");
  EXPECT_EQ(db.QueryValue("SELECT count(*)" + where + " AND status = 'ok' AND simulated"), "5");
  ASSERT_GT(db.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT record->'params'->>'container')" + where), "1");
  EXPECT_EQ(db.QueryValue("SELECT count(*)" + where + " AND record->'params'->>'container_lifecycle' = 'reuse'"), "5");
  EXPECT_EQ(db.QueryValue(absl::StrCat("SELECT count(*)", where, " AND memory->0->>'scope' = 'container'",
                                       " AND abs((memory->0->>'bytes')::bigint - ", int64_t{kAllocMiB} << 20,
                                       ") <= ", (int64_t{kAllocMiB} << 20) / 10)),
            "5")
      << db.QueryValue("SELECT string_agg(memory::text, ' | ')" + where);
  EXPECT_EQ(ReadAll(work_ + "/docker-state/removed"),
            db.QueryValue("SELECT DISTINCT record->'params'->>'container'" + where) + "\n");
  EXPECT_TRUE(ProcessesWith(prompts_).empty());
}

// examples/series/workflow-v6.yaml as written, its prompts copied where it names them, on an
// agent labelled accelerator: nvidia whose workflow-v6 is the stand-in: batch size 4, 8 and 16,
// 5 repetitions each, every run COLD, 100 requests, ACCELERATOR nvidia, the model named.
TEST_F(WorkflowSeriesTest, TheWorkflowV6ExampleRunsAgainstTheStandIn) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorProcess coordinator(db.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  const std::string source = BENCHFLEET_SOURCE_DIR;
  const std::string prompts = work_ + "/bench_prompts.jsonl";
  std::ofstream(prompts) << ReadAll(source + "/examples/prompts/bench_prompts.jsonl");
  std::string spec = ReadAll(source + "/examples/series/workflow-v6.yaml");
  const std::string named = "/srv/workflows/bench_prompts.jsonl";
  ASSERT_NE(spec.find(named), std::string::npos);
  spec.replace(spec.find(named), named.size(), prompts);
  std::ofstream(work_ + "/workflow-v6.yaml") << spec;
  const std::string config = work_ + "/agent-v6.yaml";
  std::ofstream(config) << "state_dir: " << work_ << "/state-v6\n"
                        << "labels: {accelerator: nvidia, class: a100}\n"
                        << "allow:\n  backends: [workflow]\n  workflow_dirs: [" << work_ << "]\n"
                        << "  commands:\n    workflow-v6:\n"
                        << "      argv: [" << BinaryPath("workflow-standin")
                        << ", --prompts, '{prompts}', --output, '{output}', --batch-size, '{batch_size}',"
                        << " --alloc-mib, '64', --ms-per-request, '5', --tokens, '24']\n"
                        << "      env: [ACCELERATOR, MODEL, DTYPE]\n";
  auto run = StartAgent(work_, "run-v6",
                        {"run", work_ + "/workflow-v6.yaml", "--config", config, "--out", work_ + "/series-v6",
                         "--coordinator", coordinator.address()});
  ASSERT_EQ(WaitFor(*run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-v6.log");
  const std::string where = " FROM runs WHERE series_id = 'workflow-v6-llama-2-7b-fp16'";
  ASSERT_GT(db.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  EXPECT_EQ(db.QueryValue("SELECT count(*)" + where + " AND status = 'ok' AND simulated AND phase = 'cold' AND "
                          "mode = 'nvidia' AND jsonb_array_length(record->'requests') = 100"),
            "15");
  EXPECT_EQ(db.QueryValue("SELECT string_agg(repetition || ':' || (matrix->>'batch_size'), ',' "
                          "ORDER BY start_time)" + where),
            "1:4,1:8,1:16,2:4,2:8,2:16,3:4,3:8,3:16,4:4,4:8,4:16,5:4,5:8,5:16");
  EXPECT_EQ(db.QueryValue("SELECT count(*)" + where + " AND record->'params'->>'env.ACCELERATOR' = 'nvidia' AND "
                          "record->'params'->>'env.MODEL' = 'meta-llama/Llama-2-7b-hf' AND "
                          "record->'params'->>'env.DTYPE' = 'float16' AND "
                          "record->'params'->>'batch_size' = matrix->>'batch_size' AND "
                          "record->'params'->>'prompts_count' = '100'"),
            "15");
  // One memory figure per run, of one kind and scope for the whole series (one column).
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT (memory->0->>'kind') || ' ' || "
                          "(memory->0->>'scope'))" + where + " AND jsonb_array_length(memory) = 1"),
            "1");
  // The stand-in's batches: tokens/s grows with the batch size (SIMULATED figures).
  EXPECT_EQ(db.QueryValue("SELECT string_agg(b, ',' ORDER BY t) FROM (SELECT matrix->>'batch_size' AS b, "
                          "avg((metrics->>'output_tokens_per_second')::float) AS t" + where + " GROUP BY 1) x"),
            "4,8,16");
}

TEST_F(WorkflowSeriesTest, ACommandOutsideTheAllowListIsRefusedBeforeAnythingRuns) {
  auto run = Run("refused", WriteSpec("refused", "rm-rf", "", 1));
  EXPECT_EQ(WaitFor(*run, kSeriesTimeout), 2);
  const std::string log = ReadAll(work_ + "/run-refused.log");
  EXPECT_NE(log.find(absl::StrCat("command rm-rf is not in this agent's allow-list (allow.commands in ", config_,
                                  "); allow.commands lists: standin, standin-docker, standin-exec, standin-hang, standin-up")),
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
