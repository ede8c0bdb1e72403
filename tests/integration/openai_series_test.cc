// An openai series end to end: benchfleet-agent runs a 5-repetition spec against the
// OpenAI-compatible simulator (tests/sim/openai) and streams the records to a coordinator
// process and PostgreSQL. The records are SIMULATED, each repetition's COLD warm-up is a record
// of its own with one request, every WARM record keeps its requests and its percentiles agree
// with them, and a stream the simulator cuts in the middle is one request error, not a lost
// request. A URL outside the allow-list is refused before anything runs.
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

constexpr absl::Duration kSeriesTimeout = absl::Seconds(120);
constexpr int kPrompts = 6;

int WaitFor(Subprocess& p, absl::Duration timeout) {
  if (!PollUntil([&] { return !p.running(); }, timeout)) p.Signal(SIGKILL);
  return p.Wait();
}

class OpenAiSeriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = MakeTempDir("openai");
    ::mkdir((work_ + "/data").c_str(), 0755);
    prompts_ = work_ + "/data/prompts.jsonl";
    std::ofstream prompts(prompts_);
    for (int i = 1; i <= kPrompts; ++i) {
      prompts << "{\"id\": \"q" << i << "\", \"prompt\": \"Explain in one sentence what thing " << i << " is.\"}\n";
    }
    port_ = FreePort();
    // Generation requests are counted from the simulator's start: 1 is the first repetition's
    // warm-up, 2..7 its warm run; request 4 is cut after two chunks.
    sim_ =
        std::make_unique<Subprocess>(std::vector<std::string>{BinaryPath("openai-sim"), "--port", std::to_string(port_),
                                                              "--model", "qwen-sim", "--sim-ttft-ms", "30", "--sim-tps",
                                                              "400", "--sim-fail", "cut-stream-on-request", "4:2"},
                                     std::map<std::string, std::string>{}, work_ + "/openai-sim.log");
    ASSERT_TRUE(PollUntil([&] { return ReadAll(work_ + "/openai-sim.log").find("serving") != std::string::npos; },
                          absl::Seconds(10)))
        << ReadAll(work_ + "/openai-sim.log");
    config_ = work_ + "/agent.yaml";
    std::ofstream(config_) << "state_dir: " << work_ << "/state\n"
                           << "allow:\n  backends: [openai]\n"
                           << "  urls: [http://127.0.0.1:" << port_ << "]\n"
                           << "  workflow_dirs: [" << work_ << "/data]\n";
  }

  std::string WriteSpec(const std::string& name, int port) {
    const std::string path = work_ + "/" + name + ".yaml";
    std::ofstream(path) << "series: " << name << "\n"
                        << "task: explain-one-sentence\n"
                        << "backend: openai\n"
                        << "openai:\n"
                        << "  url: http://127.0.0.1:" << port << "/v1\n"
                        << "  model: qwen-sim\n"
                        << "  endpoint: chat\n"
                        << "  prompts: " << prompts_ << "\n"
                        << "  concurrency: 3\n"
                        << "  max_tokens: 8\n"
                        << "  request_timeout: 10s\n"
                        << "  slo: {ttft: 5s, tpot: 1s}\n"
                        << "runs:\n  cold: 1\n  warm: 1\n  repetitions: 5\n";
    return path;
  }

  std::unique_ptr<Subprocess> Run(const std::string& name, const std::string& spec,
                                  const std::string& coordinator = "") {
    std::vector<std::string> args = {"run", spec, "--config", config_, "--out", work_ + "/series-" + name};
    if (!coordinator.empty()) args.insert(args.end(), {"--coordinator", coordinator});
    return StartAgent(work_, "run-" + name, args);
  }

  std::string work_;
  std::string prompts_;
  std::string config_;
  int port_ = 0;
  std::unique_ptr<Subprocess> sim_;
};

TEST_F(OpenAiSeriesTest, FiveRepetitionsThroughTheCoordinatorKeepWarmUpsApartAndEveryRequest) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorProcess coordinator(db.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  auto run = Run("five", WriteSpec("five", port_), coordinator.address());
  ASSERT_EQ(WaitFor(*run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-five.log");

  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs"), "10");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE simulated AND status = 'ok' AND backend = 'openai'"), "10");
  EXPECT_EQ(db.QueryValue("SELECT string_agg(repetition || ':' || phase || ':' || call_index, ',' "
                          "ORDER BY repetition, phase, call_index) FROM runs"),
            "1:cold:1,1:warm:1,2:cold:1,2:warm:1,3:cold:1,3:warm:1,4:cold:1,4:warm:1,5:cold:1,5:warm:1");
  ASSERT_GT(db.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  // The COLD warm-up: one request, its own record, marked; the WARM runs: every prompt.
  EXPECT_EQ(db.QueryValue("SELECT string_agg(DISTINCT phase || ':' || jsonb_array_length(record->'requests') || ':' "
                          "|| (record->'params'->>'warmup'), ',') FROM runs"),
            absl::StrCat("cold:1:true,warm:", kPrompts, ":false"));
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE phase = 'warm' AND "
                          "(metrics->>'requests')::int = 6 AND metrics ? 'output_tokens_per_second' "
                          "AND metrics ? 'ttft_p99_seconds' AND metrics ? 'tpot_p50_seconds' "
                          "AND metrics ? 'itl_p90_seconds' AND metrics ? 'goodput_requests_per_second'"),
            "5");
  // Exactly one request of the whole series was cut: an error in its record, counted, flagged;
  // every other request got its 8 tokens from `usage`.
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs r, jsonb_array_elements(r.record->'requests') q "
                          "WHERE q->>'error' LIKE 'stream cut after 3 chunks:%'"),
            "1");
  EXPECT_EQ(db.QueryValue("SELECT repetition || ':' || (metrics->>'errors') || ':' || (metrics->>'errors_stream_cut') "
                          "|| ':' || (metrics->>'requests_ok') FROM runs WHERE (metrics->>'errors')::int > 0"),
            "1:1:1:5");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE 'REQUEST_ERRORS' = ANY(flags)"), "1");
  EXPECT_EQ(
      db.QueryValue("SELECT count(*) FROM runs r, jsonb_array_elements(r.record->'requests') q "
                    "WHERE q->>'error' IS NULL AND (q->>'output_tokens')::int = 8 AND q->>'token_source' = 'usage' "
                    "AND jsonb_array_length(q->'inter_token_seconds') = 7"),
      absl::StrCat(5 + 5 * kPrompts - 1));
  // The summary figures agree with the requests kept (PostgreSQL's percentile_cont interpolates
  // as the agent does).
  for (const char* figure : {"latency_p50_seconds:latency_seconds:0.5", "latency_p99_seconds:latency_seconds:0.99",
                             "ttft_p90_seconds:time_to_first_token_seconds:0.9"}) {
    const std::vector<std::string> parts = absl::StrSplit(figure, ':');
    EXPECT_EQ(db.QueryValue(
                  absl::StrCat("SELECT count(*) FROM runs r WHERE abs((r.metrics->>'", parts[0],
                               "')::float8 - "
                               "(SELECT percentile_cont(",
                               parts[2], ") WITHIN GROUP (ORDER BY (q->>'", parts[1],
                               "')::float8) "
                               "FROM jsonb_array_elements(r.record->'requests') q WHERE q->>'error' IS NULL)) < 1e-9")),
              "10")
        << figure;
  }
  // Tokens at 400/s after a 30 ms first token: the simulated timing shows through.
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE phase = 'warm' AND (metrics->>'ttft_p50_seconds')::float8 "
                          "BETWEEN 0.03 AND 1.0"),
            "5");
  const std::string out = ReadAll(work_ + "/run-five.log");
  EXPECT_NE(out.find("output_tokens_per_second"), std::string::npos) << out;
  EXPECT_NE(out.find("SIMULATED"), std::string::npos) << out;
}

TEST_F(OpenAiSeriesTest, AUrlOutsideTheAllowListIsRefusedBeforeAnythingRuns) {
  const int outside_port = FreePort();
  auto run = Run("outside", WriteSpec("outside", outside_port));
  EXPECT_EQ(WaitFor(*run, absl::Seconds(30)), 2);
  const std::string out = ReadAll(work_ + "/run-outside.log");
  EXPECT_NE(out.find(absl::StrCat("url http://127.0.0.1:", outside_port,
                                  "/v1 is not in this agent's allow-list (allow.urls in ", config_,
                                  "); allow.urls lists: http://127.0.0.1:", port_)),
            std::string::npos)
      << out;
  EXPECT_EQ(ReadAll(work_ + "/openai-sim.log").find("generation requests"), std::string::npos);
}

}  // namespace
}  // namespace benchfleet::testing
