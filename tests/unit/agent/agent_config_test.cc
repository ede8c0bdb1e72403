#include "agent/config/agent_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::StartsWith;

constexpr char kSource[] = "/etc/benchfleet/agent.yaml";

absl::Status ErrorOf(std::string_view yaml) { return ParseAgentConfig(yaml, kSource).status(); }

TEST(AgentConfigTest, ParsesEveryKey) {
  auto config = ParseAgentConfig(R"(
coordinator: coordinator.lan:7443
state_dir: /var/lib/benchfleet
metrics_listen: 127.0.0.1:9101
labels:
  accelerator: nvidia
  class: a100
allow:
  backends: [llama-server, comfyui]
  executables:
    - /opt/llama.cpp/bin/llama-server
  model_dirs: [/models]
  urls: ["http://127.0.0.1:8188"]
)",
                                 kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->source, kSource);
  EXPECT_EQ(config->coordinator, "coordinator.lan:7443");
  EXPECT_EQ(config->state_dir, "/var/lib/benchfleet");
  EXPECT_EQ(config->metrics_listen, "127.0.0.1:9101");
  EXPECT_THAT(config->labels, ElementsAre(Pair("accelerator", "nvidia"), Pair("class", "a100")));
  EXPECT_THAT(config->allow.backends, ElementsAre("llama-server", "comfyui"));
  EXPECT_THAT(config->allow.executables, ElementsAre("/opt/llama.cpp/bin/llama-server"));
  EXPECT_THAT(config->allow.model_dirs, ElementsAre("/models"));
  EXPECT_THAT(config->allow.urls, ElementsAre("http://127.0.0.1:8188"));
}

TEST(AgentConfigTest, EmptyFileGivesDefaults) {
  auto config = ParseAgentConfig("", kSource);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->coordinator, "");
  EXPECT_EQ(config->metrics_listen, "");
  EXPECT_TRUE(config->labels.empty());
  EXPECT_TRUE(config->allow.executables.empty());
}

TEST(AgentConfigTest, TheExampleFileParses) {
  auto config = LoadAgentConfig(Env::Default(), std::string(BENCHFLEET_SOURCE_DIR) + "/agent/agent.example.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->coordinator, "coordinator-a.example.lan:7443,coordinator-b.example.lan:7443");
  EXPECT_EQ(config->metrics_listen, "0.0.0.0:9465");
  EXPECT_EQ(config->device_sampling, DeviceSampling::kAuto);
  EXPECT_EQ(config->renew_before, absl::Hours(720));
  EXPECT_FALSE(config->allow.backends.empty());
}

TEST(AgentConfigTest, CoordinatorTakesSeveralAddressesInOrder) {
  auto list = ParseAgentConfig("coordinator:\n  - a.lan:7443\n  - ' 10.0.0.2:7443 '\n", kSource);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->coordinator, "a.lan:7443,10.0.0.2:7443");
  // One gRPC target naming several addresses stays one.
  auto target = ParseAgentConfig("coordinator: ipv4:10.0.0.1:7443,10.0.0.2:7443\n", kSource);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->coordinator, "ipv4:10.0.0.1:7443,10.0.0.2:7443");
}

TEST(AgentConfigTest, CoordinatorListEntriesAreOneAddressEach) {
  EXPECT_EQ(ErrorOf("coordinator:\n  - a:1\n  - b:1,c:1\n").message(),
            absl::StrCat(kSource, ":3: coordinator: each entry of the list must be one address, HOST:PORT"));
  EXPECT_EQ(ErrorOf("coordinator:\n  - a:1\n  - [b:1]\n").message(),
            absl::StrCat(kSource, ":3: coordinator: each entry of the list must be one address, HOST:PORT"));
  EXPECT_EQ(ErrorOf("coordinator: []\n").message(), absl::StrCat(kSource, ":1: coordinator: the list names no address"));
  EXPECT_EQ(ErrorOf("coordinator: ' , '\n").message(), absl::StrCat(kSource, ":1: coordinator: no address given"));
}

TEST(AgentConfigTest, DeviceSamplingDefaultsToAutoAndReadsEachValue) {
  auto none = ParseAgentConfig("coordinator: a:1\n", kSource);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->device_sampling, DeviceSampling::kAuto);
  const std::pair<const char*, DeviceSampling> cases[] = {
      {"auto", DeviceSampling::kAuto}, {"off", DeviceSampling::kOff}, {"with_cpu_load", DeviceSampling::kWithCpuLoad}};
  for (const auto& [text, expected] : cases) {
    auto config = ParseAgentConfig(absl::StrCat("device_sampling: ", text, "\n"), kSource);
    ASSERT_TRUE(config.ok()) << text << ": " << config.status();
    EXPECT_EQ(config->device_sampling, expected) << text;
  }
}

TEST(AgentConfigTest, RenewBeforeDefaultsTo720HoursAndMustBeADuration) {
  auto none = ParseAgentConfig("coordinator: a:1\n", kSource);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->renew_before, absl::Hours(720));
  auto set = ParseAgentConfig("renew_before: 240h\n", kSource);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->renew_before, absl::Hours(240));
  EXPECT_EQ(ErrorOf("coordinator: a:1\nrenew_before: soon\n").message(),
            absl::StrCat(kSource, ":2: renew_before: 'soon' is not a duration like 720h"));
  EXPECT_EQ(ErrorOf("renew_before: -1h\n").message(),
            absl::StrCat(kSource, ":1: renew_before: '-1h' is not a duration like 720h"));
}

TEST(AgentConfigTest, UnknownDeviceSamplingIsNamedWithItsLine) {
  const absl::Status s = ErrorOf("coordinator: a:1\ndevice_sampling: cpu\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            absl::StrCat(kSource, ":2: device_sampling: 'cpu' is not one of auto, off, with_cpu_load"));
}

TEST(AgentConfigTest, UnknownTopLevelKeyIsNamedWithItsLine) {
  const absl::Status s = ErrorOf("coordinator: a:1\n\nlabls:\n  x: y\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), absl::StrCat(kSource, ":3: unknown key 'labls' (known keys: coordinator, state_dir, metrics_listen, device_sampling, labels, allow, ca_cert, plaintext, renew_before)"));
}

TEST(AgentConfigTest, UnknownAllowKeyIsNamedWithItsLine) {
  const absl::Status s = ErrorOf("allow:\n  backends: [comfyui]\n  executable: [/bin/true]\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), absl::StrCat(kSource,
                                      ":3: unknown key 'allow.executable' (known keys: backends, executables, model_dirs, urls, workflow_dirs, commands)"));
}

TEST(AgentConfigTest, KeyGivenTwiceIsAnError) {
  EXPECT_EQ(ErrorOf("state_dir: /a\nstate_dir: /b\n").message(),
            absl::StrCat(kSource, ":2: key 'state_dir' is given twice"));
}

TEST(AgentConfigTest, RelativeExecutableIsRefused) {
  EXPECT_EQ(ErrorOf("allow:\n  executables:\n    - bin/llama-server\n").message(),
            absl::StrCat(kSource, ":3: allow.executables entry 'bin/llama-server' must be an absolute path"));
}

TEST(AgentConfigTest, WrongShapesAreRefused) {
  EXPECT_EQ(ErrorOf("labels: [a, b]\n").message(), absl::StrCat(kSource, ":1: labels must be a map of name: value"));
  EXPECT_EQ(ErrorOf("labels:\n  a: [1]\n").message(), absl::StrCat(kSource, ":2: label 'a' must have a string value"));
  EXPECT_EQ(ErrorOf("allow:\n  urls: http://x\n").message(),
            absl::StrCat(kSource, ":2: allow.urls must be a list of strings"));
  EXPECT_EQ(ErrorOf("coordinator: {a: 1}\n").message(), absl::StrCat(kSource, ":1: coordinator must be a string"));
  EXPECT_EQ(ErrorOf("metrics_listen: [127.0.0.1:9101]\n").message(),
            absl::StrCat(kSource, ":1: metrics_listen must be a string"));
  EXPECT_EQ(ErrorOf("- a\n- b\n").message(),
            absl::StrCat(kSource, ":1: the top level must be a map with the keys coordinator, state_dir, metrics_listen, device_sampling, labels, allow, ca_cert, plaintext, renew_before"));
}

TEST(AgentConfigTest, InvalidYamlSaysWhere) {
  const absl::Status s = ErrorOf("labels:\n  a: [1\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith(absl::StrCat(kSource, ":3:")));
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr(": not valid YAML: "));
}

TEST(AgentConfigTest, MissingFileIsNotFound) {
  auto config = LoadAgentConfig(Env::Default(), "/nonexistent/agent.yaml");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(config.status().message(),
            "cannot read agent config: open /nonexistent/agent.yaml: No such file or directory");
}

TEST(AgentConfigTest, TheFleetCaAndPlaintextKeys) {
  auto config = ParseAgentConfig("ca_cert: /etc/benchfleet/ca.pem\nplaintext: true\n", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ca_cert, "/etc/benchfleet/ca.pem");
  EXPECT_TRUE(config->plaintext);
  EXPECT_FALSE(ParseAgentConfig("", kSource)->plaintext);
  EXPECT_EQ(ErrorOf("plaintext: sometimes\n").message(), absl::StrCat(kSource, ":1: plaintext must be true or false"));
}

}  // namespace
}  // namespace benchfleet::agent
