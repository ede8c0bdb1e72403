// The fixture of the llama-server backend tests: a temp dir with a model file and stand-in
// server scripts, a replay server that plays llama-server's HTTP side from the captures, a
// stepping clock, and the allow-list that lets the backend use them. The stand-in script is a
// real child process (so start, /proc VmHWM, SIGTERM and death are real); it records its pid and
// arguments, writes the captured -lv 4 log, and sleeps until stopped. Not thread-safe.
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_BACKEND_TEST_FIXTURE_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_BACKEND_TEST_FIXTURE_H_

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/backends/services.h"
#include "agent/backends/llama_server/llama_server_backend.h"
#include "tests/unit/agent/llama_server/replay_server.h"
#include "tests/support/clock_env.h"
#include "tests/unit/agent/temp_dir.h"
#include "tests/support/poll.h"

namespace benchfleet::agent::testing {

using ::benchfleet::testing::ClockEnv;

// Polls on the real clock (these tests wait on other processes and the kernel) for up to 10 s.
template <typename Pred>
bool Eventually(Pred pred) {
  return ::benchfleet::testing::PollUntil(pred, absl::Seconds(10), absl::Milliseconds(10));
}

inline std::string ReadText(const std::string& path) {
  absl::StatusOr<std::string> text = Env::Default()->ReadFile(path);
  return text.ok() ? *text : "";
}

class LlamaServerBackendTest : public ::testing::Test {
 protected:
  LlamaServerBackendTest() {
    Env::Default()->CreateDirs(dir_.path() + "/models").IgnoreError();
    std::ofstream(model_) << "GGUF";
    WriteScript(standin_, absl::StrCat("echo $$ > ", pid_file_, "\nprintf '%s\\n' \"$@\" > ", args_file_, "\ncat ",
                                       BENCHFLEET_LLAMA_FIXTURES, "/startup_verbose_lv4.log >&2\ntouch ", ready_file_,
                                       "\nexec sleep 1000\n"));
    WriteScript(crasher_,
                "echo \"llama_model_load: error loading model: tensor 'blk.0.attn_q.weight' data is not within the "
                "file bounds\" >&2\necho 'main: exiting due to model loading error' >&2\nexit 1\n");
    AllowConfig allow;
    allow.backends = {"llama-server"};
    allow.executables = {standin_, crasher_, "/nonexistent/llama-server"};
    allow.model_dirs = {dir_.path() + "/models"};
    allow.urls = {server_.base_url()};
    allow_ = std::make_unique<AllowList>(allow, "/etc/benchfleet/agent.yaml");
    context_.env = &env_;
    context_.services = services_.services();
    context_.allow = allow_.get();
    context_.work_dir = work_dir_;
    context_.log = [this](std::string_view line) { logs_.emplace_back(line); };
  }

  static void WriteScript(const std::string& path, const std::string& body) {
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
  }

  // A launched section over the stand-in script, with extra lines appended.
  std::string LaunchedSection(const std::string& extra = "") const {
    return absl::StrCat("binary: ", standin_, "\nmodel: ", model_,
                        "\nargs: [-c, 256]\nmodes:\n  gpu: [-ngl, 99]\n  cpu: [-ngl, 0]\n"
                        "prompt: Explain in one sentence what a GPU is.\nn_predict: 24\nseed: 42\n",
                        extra);
  }

  std::string UrlSection(const std::string& extra = "") const {
    return absl::StrCat("url: ", server_.base_url(), "\nprompt: Explain in one sentence what a GPU is.\nn_predict: 24\n",
                        extra);
  }

  // Builds the backend. The server it starts is given `port`, by default the replay server's, so
  // that the replay server answers in its name.
  absl::StatusOr<std::unique_ptr<Backend>> Make(const std::string& section, int port = 0) {
    LlamaServerDependencies deps;
    const int chosen = port == 0 ? server_.port() : port;
    deps.pick_port = [chosen]() -> absl::StatusOr<int> { return chosen; };
    return NewLlamaServerBackendWith(YAML::Load(section), context_, std::move(deps));
  }

  // /health answers 503 "Loading model" `loading` times, then 200. For a launched server
  // (standin), the first answer waits until the stand-in has written its log, as the real server
  // prints its buffers before it is ready.
  void ServeHealth(int loading, bool standin = true) {
    std::vector<Reply> health;
    for (int i = 0; i < loading; ++i) health.push_back(ReplyFromCapture(Fixture("health_loading.txt")));
    health.push_back(ReplyFromCapture(Fixture("health.txt")));
    if (standin) {
      health.front().before = [this] { Eventually([this] { return Env::Default()->FileExists(ready_file_); }); };
    }
    server_.On("GET /health", health);
  }

  void ServeHealthyServer(const std::string& completion_fixture = "completion_1.txt", bool standin = true) {
    ServeHealth(2, standin);
    server_.On("GET /props", {ReplyFromCapture(Fixture("props.txt"))});
    server_.On("POST /completion", {ReplyFromCapture(Fixture(completion_fixture))});
  }

  pid_t ServerPid() const { return std::stoi(ReadText(pid_file_)); }

  // Returns a record of one run of the session.
  static v1::RunRecord RunOnce(BackendSession& session, v1::Phase phase = v1::PHASE_COLD, uint32_t call_index = 1) {
    v1::RunRecord record;
    RunInput input;
    input.phase = phase;
    input.call_index = call_index;
    input.repetition = 1;
    session.Run(input, &record);
    return record;
  }

  ScopedTempDir dir_;
  const std::string model_ = dir_.path() + "/models/tiny.gguf";
  const std::string standin_ = dir_.path() + "/llama-server";
  const std::string crasher_ = dir_.path() + "/llama-server-crash";
  const std::string pid_file_ = dir_.path() + "/server.pid";
  const std::string args_file_ = dir_.path() + "/server.args";
  const std::string ready_file_ = dir_.path() + "/server.ready";
  const std::string work_dir_ = dir_.path() + "/work";
  // Nothing waits: SleepFor moves the clock at once, and every Monotonic() reading moves it 1 ms,
  // so a /health deadline passes without real waiting and a run's wall time and time to first
  // token come out exact (one step per reading).
  SimulatedClock clock_{{.sleeps_advance = true, .step_per_reading = absl::Milliseconds(1)}};
  ClockEnv env_{&clock_};
  ReplayServer server_;
  std::unique_ptr<AllowList> allow_;
  AgentServices services_{&env_};
  BackendContext context_;
  std::vector<std::string> logs_;
};

}  // namespace benchfleet::agent::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_BACKEND_TEST_FIXTURE_H_
