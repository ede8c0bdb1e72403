// The agent's own /metrics, end to end: `benchfleet-agent serve --metrics-listen 127.0.0.1:0`
// scraped over HTTP while its records wait (no coordinator listens yet: connected 0, the outbox
// holds a SIMULATED series queued beforehand), then while a small in-test AgentGateway (a fake
// coordinator) runs a llama-server task against the simulator (current_task{task} 1), after it
// (the outbox drained to 0, the task's sample gone), after a broken stream (one reconnect) and
// after the coordinator went away (connected 0). Also: an address serve cannot use fails at
// start-up with exit code 2. No PostgreSQL.
#include <signal.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/http/http_client.h"
#include "benchfleet/v1/record.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/fake_coordinator.h"
#include "tests/integration/fleet.h"

namespace benchfleet::testing {
namespace {

constexpr char kTaskName[] = "llama-qwen2.5-3b-q4km";

// A llama-server task against the simulator: one cold and two warm runs, a second apart, so the
// test sees it running.
v1::TaskAssignment LlamaTask(const std::string& model) {
  v1::TaskAssignment llama;
  llama.set_task_id("task-llama");
  llama.set_series_id("series-1");
  llama.set_attempt(1);
  llama.set_spec_yaml(absl::StrCat("series: fleet-llama\n"
                                   "task: ", kTaskName, "\n"
                                   "backend: llama-server\n"
                                   "llama-server:\n"
                                   "  binary: ", BinaryPath("llama-server-sim"), "\n"
                                   "  model: ", model, "\n"
                                   "  args: [-c, '256', --sim-load-ms, '100']\n"
                                   "  modes: {gpu: [-ngl, '99']}\n"
                                   "  prompt: Explain in one sentence what a GPU is.\n"
                                   "  n_predict: 8\n"
                                   "  health_timeout: 10s\n"
                                   "  request_timeout: 5s\n"
                                   "  stop_grace: 2s\n"
                                   "runs:\n  cold: 1\n  warm: 2\n  pause_between_runs: 1s\n"));
  return llama;
}

// Returns the port serve logged ("serve: metrics on port N (/metrics)"), or 0 before it did.
int LoggedMetricsPort(const std::string& log) {
  constexpr std::string_view kPrefix = "metrics on port ";
  const size_t at = log.find(kPrefix);
  if (at == std::string::npos) return 0;
  const size_t end = log.find(" (/metrics)", at);
  int port = 0;
  if (end == std::string::npos || !absl::SimpleAtoi(log.substr(at + kPrefix.size(), end - at - kPrefix.size()), &port)) {
    return 0;
  }
  return port;
}

// One scrape: every sample, by its series ("name" or "name{label=\"value\"}"); nullopt when the
// endpoint did not answer 200.
std::optional<std::map<std::string, double>> Scrape(int port) {
  agent::HttpRequest request;
  request.url = absl::StrCat("http://127.0.0.1:", port, "/metrics");
  request.total_timeout = absl::Seconds(10);
  auto response = agent::NewCurlHttpClient()->Send(request);
  if (!response.ok() || response->status != 200) return std::nullopt;
  std::map<std::string, double> samples;
  std::istringstream lines(response->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    double value = 0;
    if (space == std::string::npos || !absl::SimpleAtod(line.substr(space + 1), &value)) {
      ADD_FAILURE() << "not a sample line: " << line;
      continue;
    }
    samples[line.substr(0, space)] = value;
  }
  return samples;
}

// The agent's samples that this test follows, as one line ("outbox 3 connected 0 ..."), so that
// a failed expectation shows them all.
std::string Brief(const std::map<std::string, double>& s) {
  auto get = [&](const std::string& name) {
    auto it = s.find(name);
    return it == s.end() ? std::string("absent") : absl::StrCat(it->second);
  };
  return absl::StrCat("outbox ", get("benchfleet_agent_outbox_records"), " connected ",
                      get("benchfleet_agent_coordinator_connected"), " reconnects ",
                      get("benchfleet_agent_reconnects_total"), " sent ", get("benchfleet_agent_records_sent_total"),
                      " running ", get("benchfleet_agent_task_running"), " current ",
                      get(absl::StrCat("benchfleet_agent_current_task{task=\"", kTaskName, "\"}")));
}

TEST(AgentMetricsServeTest, ServeExposesOutboxConnectionReconnectsAndTheRunningTask) {
  const AgentFiles files("agent-metrics");
  const std::string& work = files.work;
  // A series queued while no coordinator is known: 4 SIMULATED records wait in the outbox.
  ASSERT_EQ(StartAgent(work, "simulate", {"simulate", "--config", files.config, "--out", work + "/simulated",
                                          "--runs", "4"})
                ->Wait(),
            0)
      << ReadAll(work + "/simulate.log");

  // Serve against a port where nothing listens yet.
  const int coordinator_port = FreePort();
  auto agent = StartAgent(work, "serve", {"serve", "--config", files.config, "--coordinator",
                                          absl::StrCat("127.0.0.1:", coordinator_port), "--metrics-listen",
                                          "127.0.0.1:0"});
  const std::string log = work + "/serve.log";
  int port = 0;
  ASSERT_TRUE(PollUntil([&] { return (port = LoggedMetricsPort(ReadAll(log))) != 0; }, absl::Seconds(30)))
      << ReadAll(log);
  ASSERT_TRUE(PollUntil([&] { return ReadAll(log).find("cannot reach coordinator") != std::string::npos; },
                        absl::Seconds(30)))
      << ReadAll(log);
  std::optional<std::map<std::string, double>> s = Scrape(port);
  ASSERT_TRUE(s.has_value()) << ReadAll(log);
  EXPECT_EQ(Brief(*s), "outbox 4 connected 0 reconnects 0 sent 0 running 0 current absent") << ReadAll(log);
  // Every family but current_task has its one sample (the others are the Exposer's own exposer_*);
  // an agent without a certificate (plaintext on loopback) has no certificate expiry either.
  EXPECT_EQ(std::count_if(s->begin(), s->end(), [](const auto& sample) {
              return absl::StartsWith(sample.first, "benchfleet_agent_");
            }),
            5);

  // The coordinator comes up with a task: while it runs, current_task names it.
  auto coordinator = std::make_unique<FakeCoordinator>(absl::StrCat("127.0.0.1:", coordinator_port), std::vector{LlamaTask(files.model)});
  ASSERT_TRUE(coordinator->started());
  const std::string current = absl::StrCat("benchfleet_agent_current_task{task=\"", kTaskName, "\"}");
  ASSERT_TRUE(PollUntil([&] { return (s = Scrape(port)) && s->count(current) == 1; }, absl::Seconds(60)))
      << ReadAll(log);
  EXPECT_EQ(s->at(current), 1);
  EXPECT_EQ(s->at("benchfleet_agent_task_running"), 1);
  EXPECT_EQ(s->at("benchfleet_agent_coordinator_connected"), 1);

  // After it: the outbox drained, every record sent once (4 queued + 3 runs), the task's sample gone.
  ASSERT_TRUE(PollUntil([&] { return coordinator->updates("task-llama", v1::TaskUpdate::kFinished).size() == 1 &&
                                   coordinator->records().size() == 7; },
                        absl::Seconds(120)))
      << ReadAll(log);
  ASSERT_TRUE(PollUntil([&] { return (s = Scrape(port)) && s->at("benchfleet_agent_outbox_records") == 0 &&
                                     s->at("benchfleet_agent_task_running") == 0; },
                        absl::Seconds(30)))
      << ReadAll(log);
  EXPECT_EQ(Brief(*s), "outbox 0 connected 1 reconnects 0 sent 7 running 0 current absent") << ReadAll(log);

  // A broken stream: the agent is accepted again, which is one reconnect.
  coordinator->BreakStream();
  ASSERT_TRUE(PollUntil([&] { return coordinator->sessions() == 2; }, absl::Seconds(30))) << ReadAll(log);
  ASSERT_TRUE(PollUntil([&] { return (s = Scrape(port)) && s->at("benchfleet_agent_reconnects_total") == 1 &&
                                     s->at("benchfleet_agent_coordinator_connected") == 1; },
                        absl::Seconds(30)))
      << ReadAll(log) << (s ? Brief(*s) : "no scrape");

  // The coordinator goes away: not connected; nothing was waiting, so nothing was sent again.
  coordinator.reset();
  ASSERT_TRUE(PollUntil([&] { return (s = Scrape(port)) && s->at("benchfleet_agent_coordinator_connected") == 0; },
                        absl::Seconds(30)))
      << ReadAll(log);
  EXPECT_EQ(Brief(*s), "outbox 0 connected 0 reconnects 1 sent 7 running 0 current absent") << ReadAll(log);

  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0) << ReadAll(log);
}

TEST(AgentMetricsServeTest, AnAddressServeCannotUseFailsAtStartUp) {
  // From agent.yaml: not HOST:PORT.
  const AgentFiles bad_config("agent-metrics", "metrics_listen: localhost\n");
  auto agent = StartAgent(bad_config.work, "serve", {"serve", "--config", bad_config.config, "--coordinator",
                                                     absl::StrCat("127.0.0.1:", FreePort())});
  EXPECT_EQ(agent->Wait(), 2);
  EXPECT_NE(ReadAll(bad_config.work + "/serve.log")
                .find("benchfleet-agent serve: error: metrics address 'localhost' is not HOST:PORT"),
            std::string::npos)
      << ReadAll(bad_config.work + "/serve.log");

  // From the flag, which wins over agent.yaml: a port already taken (by a listening gRPC server).
  const AgentFiles files("agent-metrics", "metrics_listen: 127.0.0.1:0\n");
  const int port = FreePort();
  FakeCoordinator holder(absl::StrCat("127.0.0.1:", port), {});
  ASSERT_TRUE(holder.started());
  agent = StartAgent(files.work, "serve", {"serve", "--config", files.config, "--coordinator",
                                           absl::StrCat("127.0.0.1:", FreePort()), "--metrics-listen",
                                           absl::StrCat("127.0.0.1:", port)});
  EXPECT_EQ(agent->Wait(), 2);
  EXPECT_NE(ReadAll(files.work + "/serve.log")
                .find(absl::StrCat("benchfleet-agent serve: error: cannot serve metrics on 127.0.0.1:", port, ": ")),
            std::string::npos)
      << ReadAll(files.work + "/serve.log");
}

}  // namespace
}  // namespace benchfleet::testing
