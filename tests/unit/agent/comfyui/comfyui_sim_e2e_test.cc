// End to end: the ComfyUI backend with its real HTTP and websocket clients against tests/sim's
// comfyui-sim (a separate process on a free loopback port), running the example SD 1.5 workflow.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/backends/services.h"
#include "agent/backends/comfyui/comfyui_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/subprocess.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

// Waits (real time: the simulator is a real process) until the port accepts connections.
bool WaitForPort(int port) {
  for (int i = 0; i < 250; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class ComfyUiSimE2eTest : public ::testing::Test {
 protected:
  ComfyUiSimE2eTest()
      : port_(benchfleet::testing::FreePort()),
        sim_({COMFYUI_SIM, "--listen", "127.0.0.1", "--port", absl::StrCat(port_), "--sim-node-ms", "1",
              "--sim-step-ms", "1", "--sim-checkpoints", "v1-5-pruned-emaonly.safetensors"},
             {}, dir_.path() + "/sim.log") {
    url_ = absl::StrCat("http://127.0.0.1:", port_);
    AllowConfig allow;
    allow.backends = {"comfyui"};
    allow.urls = {url_};
    allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
  }

  std::unique_ptr<Backend> Make(const std::string& seeds) {
    const YAML::Node section = YAML::Load(absl::StrCat(
        "url: ", url_, "\nworkflow: ", BENCHFLEET_SOURCE_DIR, "/examples/series/sd15-txt2img.workflow.json\n",
        "set:\n  seed: {node: \"3\", input: seed}\n  steps: {node: \"3\", input: steps}\n",
        "seeds: ", seeds, "\nsteps: 8\nfree_settle: 300ms\nrun_timeout: 30s\n",
        // The simulator is fast: only a cache, not its speed, may flag a run here.
        "cache_hit_threshold: 1us\n"));
    BackendContext context;
    context.env = Env::Default();
    context.services = services_.services();
    context.allow = allow_.get();
    context.work_dir = dir_.path() + "/series";
    ComfyUiDependencies deps;
    deps.on_progress = [this](const ComfyUiProgress& p) {
      progress_.push_back(absl::StrCat(p.node, ":", p.value, "/", p.max));
    };
    absl::StatusOr<std::unique_ptr<Backend>> backend = NewComfyUiBackendWith(section, context, deps);
    EXPECT_TRUE(backend.ok()) << backend.status();
    return backend.ok() ? std::move(*backend) : nullptr;
  }

  static v1::RunRecord Run(BackendSession& session, v1::Phase phase, uint32_t call, uint32_t input_index = 0) {
    v1::RunRecord record;
    RunInput input;
    input.phase = phase;
    input.call_index = call;
    input.repetition = 1;
    input.input_index = input_index;
    session.Run(input, &record);
    EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_OK) << record.status().message();
    return record;
  }

  static std::string FlagCodes(const v1::RunRecord& r) {
    std::string out;
    for (const v1::Flag& f : r.flags()) absl::StrAppend(&out, f.code(), " ");
    return out;
  }

  ::benchfleet::agent::testing::ScopedTempDir dir_;
  int port_;
  benchfleet::testing::Subprocess sim_;
  std::string url_;
  std::unique_ptr<AllowList> allow_;
  std::vector<std::string> progress_;
  AgentServices services_{Env::Default()};
};

TEST_F(ComfyUiSimE2eTest, ValidationColdAndWarmAgainstTheSimulator) {
  ASSERT_TRUE(WaitForPort(port_));
  std::unique_ptr<Backend> backend = Make("[42, 43]");
  ASSERT_NE(backend, nullptr);
  std::string log_tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> validation = backend->Open({}, &log_tail);
  ASSERT_TRUE(validation.ok()) << validation.status();
  EXPECT_TRUE((*validation)->info().simulated);
  const v1::RunRecord ref42 = Run(**validation, v1::PHASE_VALIDATION, 1, 0);
  const v1::RunRecord ref43 = Run(**validation, v1::PHASE_VALIDATION, 2, 1);
  EXPECT_EQ(ref42.params().at("progress_source"), "websocket");
  ASSERT_EQ(ref42.outputs_size(), 1);
  EXPECT_NE(ref42.outputs(0).sha256(), ref43.outputs(0).sha256());
  EXPECT_THAT(progress_, ::testing::Contains("3:8/8"));

  absl::StatusOr<std::unique_ptr<BackendSession>> session = backend->Open({}, &log_tail);
  ASSERT_TRUE(session.ok()) << session.status();
  const v1::RunRecord cold = Run(**session, v1::PHASE_COLD, 1);
  EXPECT_EQ(FlagCodes(cold), "");  // free_settle waited past the simulator's free-lag
  EXPECT_EQ(cold.params().at("cached_nodes"), "");
  EXPECT_EQ(cold.outputs(0).sha256(), ref42.outputs(0).sha256());  // same seed, same image
  const v1::RunRecord warm1 = Run(**session, v1::PHASE_WARM, 1);
  EXPECT_EQ(warm1.params().at("set.seed"), "43");
  EXPECT_EQ(FlagCodes(warm1), "");
  EXPECT_EQ(warm1.outputs(0).sha256(), ref43.outputs(0).sha256());
}

TEST_F(ComfyUiSimE2eTest, OneSeedMakesTheWarmRunACacheHit) {
  ASSERT_TRUE(WaitForPort(port_));
  std::unique_ptr<Backend> backend = Make("[42]");
  ASSERT_NE(backend, nullptr);
  std::string log_tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> session = backend->Open({}, &log_tail);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ(FlagCodes(Run(**session, v1::PHASE_COLD, 1)), "");
  EXPECT_EQ(FlagCodes(Run(**session, v1::PHASE_WARM, 1)), "CACHE_HIT ");
}

}  // namespace
}  // namespace benchfleet::agent
