// The built benchfleet-agent program, run as a child process against the in-test fake gateway:
// exit codes, printed summaries and what reaches the coordinator.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "agent/outbox/outbox.h"
#include "tests/unit/agent/fake_gateway.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::HasSubstr;
using testing::FakeGateway;
using testing::ScopedTempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One run of the program; stdout and stderr go to files in dir.
class AgentProcess {
 public:
  AgentProcess(const std::string& dir, std::vector<std::string> args, const std::string& name = "agent")
      : out_(dir + "/" + name + ".stdout"), err_(dir + "/" + name + ".stderr") {
    args.insert(args.begin(), BENCHFLEET_AGENT_BINARY);
    // Everything is prepared before fork(): this process has threads (gRPC), so the child may
    // only make async-signal-safe calls before exec.
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The agent must not pick up the host's settings (BENCHFLEET_COORDINATOR, ...).
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!std::string_view(*e).starts_with("BENCHFLEET_")) env.emplace_back(*e);
    }
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(out);
    ::close(err);
  }
  ~AgentProcess() {
    if (pid_ > 0 && code_ < 0) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }

  int Wait() {
    if (code_ >= 0) return code_;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return code_;
  }
  void Signal(int signo) { ::kill(pid_, signo); }
  std::string out() const { return ReadAll(out_); }
  std::string err() const { return ReadAll(err_); }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  int code_ = -1;
};

class AgentCliTest : public ::testing::Test {
 protected:
  // Runs the program to completion.
  int Run(std::vector<std::string> args) {
    process_ = std::make_unique<AgentProcess>(tmp_.path(), std::move(args));
    return process_->Wait();
  }
  std::string out() { return process_->out(); }
  std::string err() { return process_->err(); }
  size_t OutboxDepth() {
    auto outbox = Outbox::Open(Env::Default(), state_ + "/outbox");
    return outbox.ok() ? (*outbox)->depth() : 9999;
  }

  ScopedTempDir tmp_;
  std::string state_ = tmp_.path() + "/state";
  std::string series_ = tmp_.path() + "/series";
  FakeGateway gateway_;
  std::unique_ptr<AgentProcess> process_;
};

TEST_F(AgentCliTest, ConditionsPrintsJsonWithTheConfigsLabels) {
  const std::string config = tmp_.path() + "/agent.yaml";
  std::ofstream(config) << "labels:\n  class: ci-runner\n";
  ASSERT_EQ(Run({"conditions", "--config", config}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("\"hostname\": \""));
  EXPECT_THAT(out(), HasSubstr("\"class\": \"ci-runner\""));
  EXPECT_THAT(out(), HasSubstr("\"fingerprint\": \""));
}

TEST_F(AgentCliTest, BadConfigIsExitCode2WithFileAndLine) {
  const std::string config = tmp_.path() + "/agent.yaml";
  std::ofstream(config) << "labels: {}\nlabls: {}\n";
  EXPECT_EQ(Run({"conditions", "--config", config}), 2);
  EXPECT_EQ(err(), absl::StrCat("benchfleet-agent conditions: error: ", config,
                                ":2: unknown key 'labls' (known keys: coordinator, state_dir, metrics_listen, device_sampling, labels, allow, ca_cert, plaintext, renew_before)\n"));
}

TEST_F(AgentCliTest, SimulateWithoutCoordinatorKeepsRecordsForServe) {
  ASSERT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("SIMULATED series simulated-llama-qwen2.5-3b-q4km: 12 records written to " + series_));
  EXPECT_THAT(out(), HasSubstr("(12 waiting): no coordinator given"));
  EXPECT_EQ(OutboxDepth(), 12u);

  ASSERT_EQ(Run({"serve", "--coordinator", gateway_.address(), "--state-dir", state_, "--exit-when-drained"}), 0)
      << err();
  EXPECT_EQ(gateway_.stored().size(), 12u);
  EXPECT_EQ(OutboxDepth(), 0u);
  // The id in the Hello is the one kept in the state directory, and every record carries it.
  const std::string agent_id = ReadAll(state_ + "/agent_id").substr(0, 36);
  EXPECT_EQ(gateway_.last_hello().agent_id(), agent_id);
  for (const auto& record : gateway_.stored_records()) {
    EXPECT_EQ(record.agent_id(), agent_id);
    EXPECT_TRUE(record.simulated());
  }
}

TEST_F(AgentCliTest, SimulateWithCoordinatorWaitsForEveryAck) {
  ASSERT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_, "--runs", "300", "--coordinator",
                 gateway_.address()}),
            0)
      << err();
  EXPECT_THAT(out(), HasSubstr(absl::StrCat("SIMULATED records sent to coordinator ", gateway_.address(),
                                            ": 300 stored, 0 duplicates, 0 rejected")));
  EXPECT_EQ(gateway_.stored().size(), 300u);
  EXPECT_EQ(OutboxDepth(), 0u);
}

TEST_F(AgentCliTest, ImportTwiceStoresOnce) {
  ASSERT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_, "--runs", "6"}), 0) << err();
  ASSERT_EQ(Run({"import", series_, "--coordinator", gateway_.address(), "--state-dir", state_}), 0) << err();
  EXPECT_EQ(out(), "imported 6 records: 6 stored, 0 already stored, 0 rejected\n");
  const auto records = gateway_.stored_records();
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(records[2].provenance().kind(), v1::Provenance::KIND_FILE);
  EXPECT_EQ(records[2].provenance().file(), series_ + "/runs.jsonl");
  EXPECT_EQ(records[2].provenance().line(), 3u);

  ASSERT_EQ(Run({"import", series_ + "/runs.jsonl", "--coordinator", gateway_.address(), "--state-dir", state_}), 0);
  EXPECT_EQ(out(), "imported 6 records: 0 stored, 6 already stored, 0 rejected\n");
}

TEST_F(AgentCliTest, ImportReportsEachRejectionAndFails) {
  ASSERT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_, "--runs", "3"}), 0) << err();
  const std::string second_line = ReadAll(series_ + "/runs.jsonl").substr(0);
  const size_t at = second_line.find("\"run_id\":\"", second_line.find('\n')) + 10;
  const std::string run_id = second_line.substr(at, 36);
  gateway_.Reject(run_id, "metric tokens_per_second is negative");
  EXPECT_EQ(Run({"import", series_, "--coordinator", gateway_.address(), "--state-dir", state_}), 1);
  EXPECT_EQ(out(), absl::StrCat("imported 3 records: 2 stored, 0 already stored, 1 rejected\n", "  rejected ", series_,
                                "/runs.jsonl:2 (run ", run_id, "): metric tokens_per_second is negative\n"));
}

TEST_F(AgentCliTest, ImportFromAnUnreachableCoordinatorFails) {
  ASSERT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_, "--runs", "2"}), 0);
  const std::string target = absl::StrCat("127.0.0.1:", testing::UnusedLoopbackPort());
  EXPECT_EQ(Run({"import", series_, "--coordinator", target, "--state-dir", state_, "--connect-attempts", "1"}), 1);
  EXPECT_EQ(out(), "imported 2 records: 0 stored, 0 already stored, 0 rejected\n");
  EXPECT_THAT(err(), HasSubstr(absl::StrCat("benchfleet-agent import: error: coordinator ", target,
                                            " unreachable after 1 attempts: ")));
  EXPECT_THAT(err(), HasSubstr("; 2 of 2 records not acknowledged\n"));
}

TEST_F(AgentCliTest, ImportOfAMissingPathIsABadInput) {
  EXPECT_NE(Run({"import", tmp_.path() + "/nope", "--coordinator", gateway_.address()}), 0);
  EXPECT_THAT(err(), HasSubstr("nope"));
}

TEST_F(AgentCliTest, ServeStopsCleanlyOnSigtermAndKeepsTheOutbox) {
  ASSERT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_}), 0);
  gateway_.HoldAcks();
  AgentProcess serve(tmp_.path(), {"serve", "--coordinator", gateway_.address(), "--state-dir", state_}, "serve");
  ASSERT_TRUE(gateway_.WaitFor([&] { return gateway_.batches() == 1; }));
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(), 0) << serve.err();
  EXPECT_THAT(serve.err(), HasSubstr("serve: SIGTERM, stopping; 12 records stay in the outbox"));
  EXPECT_EQ(OutboxDepth(), 12u);
}

TEST_F(AgentCliTest, ASecondAgentOnTheSameStateDirectoryIsRefused) {
  ASSERT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_, "--runs", "2"}), 0);
  gateway_.HoldAcks();
  AgentProcess serve(tmp_.path(), {"serve", "--coordinator", gateway_.address(), "--state-dir", state_}, "serve");
  ASSERT_TRUE(gateway_.WaitFor([&] { return gateway_.batches() == 1; }));
  EXPECT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_, "--runs", "2"}), 1);
  EXPECT_THAT(err(), HasSubstr(absl::StrCat("benchfleet-agent simulate: error: outbox ", state_,
                                            "/outbox is in use by another benchfleet-agent (", state_,
                                            "/outbox/LOCK is held by pid ")));
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(), 0);
}

TEST_F(AgentCliTest, ServeRefusedByTheCoordinatorExitsWithTheReason) {
  ASSERT_EQ(Run({"simulate", "--out", series_, "--state-dir", state_, "--runs", "1"}), 0);
  gateway_.Refuse("agent 0.1.0 is too old: upgrade");
  EXPECT_EQ(Run({"serve", "--coordinator", gateway_.address(), "--state-dir", state_}), 1);
  EXPECT_THAT(err(), HasSubstr(absl::StrCat("benchfleet-agent serve: error: coordinator ", gateway_.address(),
                                            " refused this agent: agent 0.1.0 is too old: upgrade\n")));
}

TEST_F(AgentCliTest, ServeWithoutCoordinatorIsABadInput) {
  EXPECT_EQ(Run({"serve", "--state-dir", state_}), 2);
  EXPECT_EQ(err(), "benchfleet-agent serve: error: no coordinator: pass --coordinator, set BENCHFLEET_COORDINATOR or "
                   "coordinator: in agent.yaml\n");
}

TEST_F(AgentCliTest, DeviceSamplingTakesWithCpuLoadAndRefusesAnythingElseWithExitCode2) {
  // Accepted: serve starts with it, finds nothing to send and exits when drained.
  ASSERT_EQ(Run({"serve", "--coordinator", gateway_.address(), "--state-dir", state_, "--exit-when-drained",
                 "--device-sampling", "with_cpu_load"}),
            0)
      << err();
  EXPECT_THAT(err(), HasSubstr("serve: outbox drained, exiting (--exit-when-drained)"));

  // Refused before anything starts, naming the three values.
  const std::string refused = "error: --device-sampling: 'sometimes' is not one of auto, off, with_cpu_load\n";
  EXPECT_EQ(Run({"serve", "--coordinator", gateway_.address(), "--state-dir", state_, "--device-sampling",
                 "sometimes"}),
            2);
  EXPECT_EQ(err(), "benchfleet-agent serve: " + refused);
  EXPECT_EQ(gateway_.batches(), 0);

  const std::string spec = tmp_.path() + "/spec.yaml";
  std::ofstream(spec) << "series: sampled\ntask: t\nbackend: llama-server\nllama-server:\n"
                      << "  binary: /opt/llama/llama-server\n  model: /models/m.gguf\n  modes:\n    cpu: []\n"
                      << "runs:\n  cold: 1\n";
  EXPECT_EQ(Run({"run", spec, "--out", series_, "--state-dir", state_, "--device-sampling", "sometimes"}), 2);
  EXPECT_EQ(err(), "benchfleet-agent run: " + refused);
  EXPECT_FALSE(std::ifstream(series_ + "/spec.yaml").good()) << "nothing is written before the flags are checked";
}

TEST_F(AgentCliTest, EveryCommandHasHelpAndBadFlagsFail) {
  for (const char* command : {"conditions", "serve", "simulate", "import"}) {
    EXPECT_EQ(Run({command, "--help"}), 0) << command;
    EXPECT_THAT(out(), HasSubstr("Usage:")) << command;
  }
  EXPECT_NE(Run({"simulate", "--out", series_, "--runs", "0"}), 0);
  EXPECT_NE(Run({"serve", "--no-such-flag"}), 0);
  EXPECT_NE(Run({}), 0);
}

}  // namespace
}  // namespace benchfleet::agent
