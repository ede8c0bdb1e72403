#include "agent/config/allow_list.h"

#include <gtest/gtest.h>

namespace benchfleet::agent {
namespace {

constexpr char kSource[] = "/etc/benchfleet/agent.yaml";

AllowList MakeList() {
  AllowConfig allow;
  allow.backends = {"llama-server"};
  allow.executables = {"/opt/llama.cpp/bin/llama-server"};
  allow.model_dirs = {"/models", "/srv/weights/"};
  allow.urls = {"http://127.0.0.1:8188", "https://api.example.com/v1"};
  allow.workflow_dirs = {"/srv/workflows"};
  return AllowList(allow, kSource);
}

TEST(AllowListTest, ExecutableNotListedIsRefusedWithTheSettingToChange) {
  const absl::Status s = MakeList().CheckExecutable("/opt/x");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "executable /opt/x is not in this agent's allow-list (allow.executables in /etc/benchfleet/agent.yaml)");
}

TEST(AllowListTest, ExecutableMatchesAfterCanonicalForm) {
  const AllowList list = MakeList();
  EXPECT_TRUE(list.CheckExecutable("/opt/llama.cpp/bin/llama-server").ok());
  EXPECT_TRUE(list.CheckExecutable("/opt//llama.cpp/./bin/../bin/llama-server").ok());
  EXPECT_EQ(list.CheckExecutable("bin/llama-server").message(),
            "executable bin/llama-server is not an absolute path; the allow-list holds absolute paths only");
}

TEST(AllowListTest, BackendNotListedIsRefused) {
  EXPECT_TRUE(MakeList().CheckBackend("llama-server").ok());
  EXPECT_EQ(MakeList().CheckBackend("comfyui").message(),
            "backend comfyui is not in this agent's allow-list (allow.backends in /etc/benchfleet/agent.yaml)");
}

TEST(AllowListTest, ModelPathMustStayInsideAModelDir) {
  const AllowList list = MakeList();
  EXPECT_TRUE(list.CheckModelPath("/models/qwen2.5-3b-instruct-q4_k_m.gguf").ok());
  EXPECT_TRUE(list.CheckModelPath("/srv/weights/sd15/model.safetensors").ok());
  EXPECT_TRUE(list.CheckModelPath("/models").ok());
  EXPECT_EQ(list.CheckModelPath("/models/../etc/shadow").message(),
            "model path /models/../etc/shadow is not in this agent's allow-list (allow.model_dirs in "
            "/etc/benchfleet/agent.yaml)");
  EXPECT_EQ(list.CheckModelPath("/modelsx/a.gguf").code(), absl::StatusCode::kPermissionDenied);
}

TEST(AllowListTest, WorkflowPathMustStayInsideAWorkflowDir) {
  const AllowList list = MakeList();
  EXPECT_TRUE(list.CheckInputFile("/srv/workflows/sd15-txt2img.workflow.json").ok());
  EXPECT_EQ(list.CheckInputFile("/srv/workflows/../../etc/shadow").message(),
            "workflow path /srv/workflows/../../etc/shadow is not in this agent's allow-list "
            "(allow.workflow_dirs in /etc/benchfleet/agent.yaml)");
  EXPECT_EQ(list.CheckInputFile("/models/a.json").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(list.CheckInputFile("w.json").message(),
            "workflow path w.json is not an absolute path; the allow-list holds absolute paths only");
}

TEST(AllowListTest, UrlMustMatchSchemeHostPortAndPathPrefix) {
  const AllowList list = MakeList();
  EXPECT_TRUE(list.CheckUrl("http://127.0.0.1:8188/prompt").ok());
  EXPECT_TRUE(list.CheckUrl("HTTP://127.0.0.1:8188").ok());
  EXPECT_TRUE(list.CheckUrl("https://api.example.com/v1/chat/completions?x=1").ok());
  EXPECT_TRUE(list.CheckUrl("https://api.example.com:443/v1/models").ok());
  EXPECT_EQ(list.CheckUrl("https://api.example.com/v10").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(list.CheckUrl("http://127.0.0.1:8189/prompt").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(list.CheckUrl("https://127.0.0.1:8188/prompt").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(list.CheckUrl("http://127.0.0.1:8188@evil.example/").message(),
            "url http://127.0.0.1:8188@evil.example/ is not in this agent's allow-list (allow.urls in "
            "/etc/benchfleet/agent.yaml)");
  EXPECT_EQ(list.CheckUrl("127.0.0.1:8188").message(),
            "url 127.0.0.1:8188 is not a URL of the form scheme://host[:port]/path");
}

TEST(AllowListTest, WithoutAConfigFileEverythingIsRefusedAndTheMessageSaysWhy) {
  const AllowList list(AgentConfig{});
  EXPECT_EQ(list.CheckBackend("llama-server").message(),
            "backend llama-server is not in this agent's allow-list (allow.backends; this agent runs without a "
            "config file)");
}

TEST(AllowListTest, WithAllowedAddsWhatTheNamedSettingLists) {
  const AllowList list = MakeList();
  EXPECT_EQ(list.WithAllowed(list.CheckExecutable("/bin/sh")).message(),
            "executable /bin/sh is not in this agent's allow-list (allow.executables in /etc/benchfleet/agent.yaml); "
            "allow.executables lists: /opt/llama.cpp/bin/llama-server");
  const AllowList empty(AgentConfig{});
  EXPECT_EQ(empty.WithAllowed(empty.CheckUrl("http://h:1/")).message(),
            "url http://h:1/ is not in this agent's allow-list (allow.urls; this agent runs without a config file); "
            "allow.urls is empty: this agent allows none");
  // Not a refusal of the list: unchanged.
  EXPECT_EQ(list.WithAllowed(absl::InvalidArgumentError("line 3: bad")), absl::InvalidArgumentError("line 3: bad"));
  EXPECT_TRUE(list.WithAllowed(absl::OkStatus()).ok());
}

TEST(CanonicalPathTest, FoldsDotsAndSlashes) {
  EXPECT_EQ(CanonicalPath("/a//b/./c/"), "/a/b/c");
  EXPECT_EQ(CanonicalPath("/a/b/../../.."), "/");
  EXPECT_EQ(CanonicalPath("/"), "/");
  EXPECT_EQ(CanonicalPath("a/b"), "");
}

}  // namespace
}  // namespace benchfleet::agent
