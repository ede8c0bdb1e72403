#include "agent/backends/llama_server/llama_server_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace benchfleet::agent::llama_server {
namespace {

constexpr char kAgentYaml[] = "/etc/benchfleet/agent.yaml";

AllowList Allow() {
  AllowConfig allow;
  allow.backends = {"llama-server"};
  allow.executables = {"/opt/llama.cpp/bin/llama-server"};
  allow.model_dirs = {"/models"};
  allow.urls = {"http://127.0.0.1:8080"};
  return AllowList(allow, kAgentYaml);
}

// Parses the `llama-server:` section of a spec text (line numbers count from the spec's top).
absl::StatusOr<LlamaServerConfig> ParseSpec(const std::string& spec) {
  const YAML::Node root = YAML::Load(spec);
  return ParseLlamaServerSection(root["llama-server"], Allow());
}

void ExpectError(const std::string& spec, absl::StatusCode code, const std::string& message) {
  absl::StatusOr<LlamaServerConfig> config = ParseSpec(spec);
  EXPECT_EQ(config.status().code(), code) << spec;
  EXPECT_EQ(config.status().message(), message) << spec;
}

TEST(LlamaServerConfigTest, ParsesAFullSection) {
  absl::StatusOr<LlamaServerConfig> config = ParseSpec(R"(
llama-server:
  binary: /opt/llama.cpp/bin/../bin/llama-server
  model: /models/qwen2.5-3b-instruct-q4_k_m.gguf
  args: [-c, 4096, --threads, 8]
  modes:
    gpu: [-ngl, 99]
    cpu: [-ngl, 0]
    hybrid: [-ngl, 18]
  prompt: Explain in one sentence what a GPU is.
  n_predict: 128
  seed: 7
  stream: true
  health_timeout: 3m
  request_timeout: 90s
  stop_grace: 500ms
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->binary, "/opt/llama.cpp/bin/llama-server");
  EXPECT_EQ(config->model, "/models/qwen2.5-3b-instruct-q4_k_m.gguf");
  EXPECT_THAT(config->args, ::testing::ElementsAre("-c", "4096", "--threads", "8"));
  ASSERT_EQ(config->modes.size(), 3u);
  EXPECT_EQ(config->modes[0].first, "gpu");
  EXPECT_THAT(config->modes[0].second, ::testing::ElementsAre("-ngl", "99"));
  EXPECT_EQ(config->modes[1].first, "cpu");
  EXPECT_THAT(config->modes[1].second, ::testing::ElementsAre("-ngl", "0"));
  EXPECT_EQ(config->modes[2].first, "hybrid");
  EXPECT_EQ(config->prompt, "Explain in one sentence what a GPU is.");
  EXPECT_EQ(config->n_predict, 128);
  EXPECT_EQ(config->seed, 7u);
  EXPECT_TRUE(config->stream);
  EXPECT_EQ(config->health_timeout, absl::Minutes(3));
  EXPECT_EQ(config->request_timeout, absl::Seconds(90));
  EXPECT_EQ(config->stop_grace, absl::Milliseconds(500));
  EXPECT_FALSE(config->external());
}

TEST(LlamaServerConfigTest, DefaultsAndASingleDefaultMode) {
  absl::StatusOr<LlamaServerConfig> config = ParseSpec(R"(
llama-server:
  binary: /opt/llama.cpp/bin/llama-server
  model: /models/m.gguf
  prompt: hi
)");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->modes.size(), 1u);
  EXPECT_EQ(config->modes[0].first, "default");
  EXPECT_TRUE(config->modes[0].second.empty());
  EXPECT_EQ(config->n_predict, 128);
  EXPECT_EQ(config->seed, 42u);
  EXPECT_FALSE(config->stream);
  EXPECT_EQ(config->health_timeout, absl::Seconds(120));
  EXPECT_EQ(config->request_timeout, absl::Seconds(300));
  EXPECT_EQ(config->stop_grace, absl::Seconds(10));
}

TEST(LlamaServerConfigTest, UrlOfARunningServer) {
  absl::StatusOr<LlamaServerConfig> config = ParseSpec(R"(
llama-server:
  url: http://127.0.0.1:8080/
  prompt: hi
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->external());
  EXPECT_EQ(config->url, "http://127.0.0.1:8080");
  EXPECT_TRUE(config->modes.empty());
}

TEST(LlamaServerConfigTest, UnknownKeysAndWrongTypesNameTheKeyAndLine) {
  const std::string head =
      "llama-server:\n"
      "  binary: /opt/llama.cpp/bin/llama-server\n"
      "  model: /models/m.gguf\n"
      "  prompt: hi\n";
  ExpectError(head + "  n_predikt: 5\n", absl::StatusCode::kInvalidArgument,
              "line 5: unknown key llama-server.n_predikt (known keys: allow_no_offload, allow_partial_offload, args, "
              "binary, health_timeout, model, modes, n_predict, prompt, request_timeout, seed, stop_grace, stream, "
              "url)");
  ExpectError(head + "  n_predict: many\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.n_predict must be a positive integer, got 'many'");
  ExpectError(head + "  n_predict: 0\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.n_predict must be a positive integer, got '0'");
  ExpectError(head + "  seed: -1\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.seed must be an integer from 0 to 4294967294, got '-1'");
  ExpectError(head + "  stream: maybe\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.stream must be true or false, got 'maybe'");
  ExpectError(head + "  health_timeout: 120\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.health_timeout must be a positive duration such as 120s, 2m or 500ms, got '120'");
  // Issue 19 case 6: every duration has an upper bound (common/spec/series_spec.h).
  ExpectError(head + "  request_timeout: 100000000h\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.request_timeout must be at most 24h, got 100000000h");
  ExpectError(head + "  health_timeout: 25h\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.health_timeout must be at most 24h, got 25h");
  ExpectError(head + "  stop_grace: 11m\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.stop_grace must be at most 10m, got 11m");
  ExpectError(head + "  stop_grace: [1s]\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.stop_grace must be a positive duration such as 120s, 2m or 500ms, got 'a "
              "non-scalar'");
  ExpectError(head + "  args: -c 4096\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.args must be a list of strings");
  ExpectError(head + "  args:\n    - -c\n    - {a: 1}\n", absl::StatusCode::kInvalidArgument,
              "line 7: llama-server.args must be a list of non-empty strings");
  ExpectError(head + "  modes: [gpu, cpu]\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.modes must be a map of mode name: [arguments], e.g. gpu: [-ngl, 99]");
  ExpectError(head + "  modes:\n    gpu: -ngl 99\n", absl::StatusCode::kInvalidArgument,
              "line 6: llama-server.modes.gpu must be a list of strings");
  ExpectError(head + "  modes:\n    \"g p u\": []\n", absl::StatusCode::kInvalidArgument,
              "line 6: llama-server.modes names must be letters, digits, '_', '-' or '.', got 'g p u'");
  ExpectError(head + "  prompt: again\n", absl::StatusCode::kInvalidArgument,
              "line 5: key llama-server.prompt is given twice");
  ExpectError("llama-server: [a]\n", absl::StatusCode::kInvalidArgument,
              "line 1: llama-server must be a map with the keys allow_no_offload, allow_partial_offload, args, binary, "
              "health_timeout, model, modes, n_predict, prompt, request_timeout, seed, stop_grace, stream, url");
}

TEST(LlamaServerConfigTest, OffloadAllowancesNameModesOfTheSection) {
  const std::string head =
      "llama-server:\n  binary: /opt/llama.cpp/bin/llama-server\n  model: /models/m.gguf\n  prompt: hi\n"
      "  modes:\n    gpu: [-ngl, 99]\n    cpu: [-ngl, 0]\n";
  absl::StatusOr<LlamaServerConfig> config =
      ParseSpec(head + "  allow_no_offload: [gpu]\n  allow_partial_offload: [gpu, cpu]\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->allow_no_offload, (std::set<std::string>{"gpu"}));
  EXPECT_EQ(config->allow_partial_offload, (std::set<std::string>{"cpu", "gpu"}));
  ExpectError(head + "  allow_no_offload: [gpu, tpu]\n", absl::StatusCode::kInvalidArgument,
              "line 8: llama-server.allow_no_offload names mode tpu, which llama-server.modes does not define (its "
              "modes: gpu, cpu)");
  ExpectError(head + "  allow_partial_offload: gpu\n", absl::StatusCode::kInvalidArgument,
              "line 8: llama-server.allow_partial_offload must be a list of strings");
  ExpectError("llama-server:\n  url: http://127.0.0.1:8080\n  prompt: hi\n  allow_no_offload: [external]\n",
              absl::StatusCode::kInvalidArgument,
              "line 4: llama-server.allow_no_offload cannot be combined with llama-server.url: a server given by url "
              "is not started by the agent");
}

TEST(LlamaServerConfigTest, MissingOrConflictingKeys) {
  ExpectError("llama-server:\n  binary: /opt/llama.cpp/bin/llama-server\n  prompt: hi\n",
              absl::StatusCode::kInvalidArgument,
              "line 2: llama-server needs either llama-server.url or both llama-server.binary and llama-server.model");
  ExpectError("llama-server:\n  binary: /opt/llama.cpp/bin/llama-server\n  model: /models/m.gguf\n",
              absl::StatusCode::kInvalidArgument, "line 2: llama-server.prompt is required");
  ExpectError("llama-server:\n  url: http://127.0.0.1:8080\n  modes: {gpu: [-ngl, 99]}\n  prompt: hi\n",
              absl::StatusCode::kInvalidArgument,
              "line 3: llama-server.modes cannot be combined with llama-server.url: a server given by url is not "
              "started by the agent");
  ExpectError("llama-server:\n  url: 127.0.0.1:8080\n  prompt: hi\n", absl::StatusCode::kInvalidArgument,
              "line 2: llama-server.url must be an http:// or https:// URL, got '127.0.0.1:8080'");
}

TEST(LlamaServerConfigTest, ArgumentsTheAgentSetsItselfAreRefused) {
  const std::string head =
      "llama-server:\n"
      "  binary: /opt/llama.cpp/bin/llama-server\n"
      "  model: /models/m.gguf\n"
      "  prompt: hi\n";
  ExpectError(head + "  args: [-c, 4096, --port, 9000]\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.args must not contain --port: the agent sets the model, host, port, log and "
              "verbosity itself");
  ExpectError(head + "  modes:\n    gpu: [--host=0.0.0.0]\n", absl::StatusCode::kInvalidArgument,
              "line 6: llama-server.modes.gpu must not contain --host: the agent sets the model, host, port, log and "
              "verbosity itself");
  ExpectError(head + "  args: [-hf, Qwen/Qwen2.5-3B-Instruct-GGUF]\n", absl::StatusCode::kInvalidArgument,
              "line 5: llama-server.args must not contain -hf: the agent sets the model, host, port, log and "
              "verbosity itself");
}

TEST(LlamaServerConfigTest, AllowListRefusals) {
  ExpectError("llama-server:\n  binary: /usr/local/bin/llama-server\n  model: /models/m.gguf\n  prompt: hi\n",
              absl::StatusCode::kPermissionDenied,
              "executable /usr/local/bin/llama-server is not in this agent's allow-list (allow.executables in "
              "/etc/benchfleet/agent.yaml)");
  ExpectError("llama-server:\n  binary: /opt/llama.cpp/bin/llama-server\n  model: /models/../etc/shadow\n  prompt: hi\n",
              absl::StatusCode::kPermissionDenied,
              "model path /models/../etc/shadow is not in this agent's allow-list (allow.model_dirs in "
              "/etc/benchfleet/agent.yaml)");
  ExpectError("llama-server:\n  url: http://10.0.0.5:8080\n  prompt: hi\n", absl::StatusCode::kPermissionDenied,
              "url http://10.0.0.5:8080 is not in this agent's allow-list (allow.urls in /etc/benchfleet/agent.yaml)");
  ExpectError("llama-server:\n  binary: /opt/llama.cpp/bin/llama-server\n  model: /models/m.gguf\n  prompt: hi\n"
              "  args: [--lora, /home/me/adapter.gguf]\n",
              absl::StatusCode::kPermissionDenied,
              "model path /home/me/adapter.gguf is not in this agent's allow-list (allow.model_dirs in "
              "/etc/benchfleet/agent.yaml)");
  ExpectError("llama-server:\n  binary: /opt/llama.cpp/bin/llama-server\n  model: /models/m.gguf\n  prompt: hi\n"
              "  modes:\n    spec: [--model-draft=/tmp/draft.gguf]\n",
              absl::StatusCode::kPermissionDenied,
              "model path /tmp/draft.gguf is not in this agent's allow-list (allow.model_dirs in "
              "/etc/benchfleet/agent.yaml)");
  // Inside the allow-list, a model-file argument is fine.
  EXPECT_TRUE(ParseSpec("llama-server:\n  binary: /opt/llama.cpp/bin/llama-server\n  model: /models/m.gguf\n"
                        "  prompt: hi\n  args: [-md, /models/draft.gguf]\n")
                  .ok());
}

}  // namespace
}  // namespace benchfleet::agent::llama_server
