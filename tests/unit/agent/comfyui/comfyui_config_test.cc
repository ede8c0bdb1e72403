#include "agent/backends/comfyui/comfyui_config.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/comfyui/comfyui_fixtures.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent::comfyui {
namespace {

class ComfyUiConfigTest : public ::testing::Test {
 protected:
  ComfyUiConfigTest() {
    path_ = dir_.path() + "/w.json";
    EXPECT_TRUE(Env::Default()
                    ->WriteFileAtomically(path_, testing::Capture("post_prompt_ok_run1_first.json")["request"]["body"]
                                                                 ["prompt"]
                                                                     .dump())
                    .ok());
    AllowConfig allow;
    allow.urls = {"http://127.0.0.1:8188"};
    allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
  }

  absl::StatusOr<ComfyUiConfig> Parse(const std::string& yaml) {
    std::string text = yaml;
    for (size_t at; (at = text.find("WORKFLOW")) != std::string::npos;) text.replace(at, 8, path_);
    return ParseComfyUiSection(YAML::Load(text), *allow_, Env::Default());
  }

  ::benchfleet::agent::testing::ScopedTempDir dir_;
  std::string path_;
  std::unique_ptr<AllowList> allow_;
};

TEST_F(ComfyUiConfigTest, FullSection) {
  absl::StatusOr<ComfyUiConfig> c = Parse(
      "url: http://127.0.0.1:8188/\n"
      "workflow: WORKFLOW\n"
      "set:\n"
      "  seed: {node: \"2\", input: seed}\n"
      "  width: {node: \"3\", input: width}\n"
      "seeds: [42, 43, 18446744073709551615]\n"
      "width: 1024\n"
      "distinct_runs: true\n"
      "cache_hit_threshold: 250ms\n"
      "run_timeout: 20m\n"
      "free_settle: 500ms\n"
      "pid: 4242\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->url, "http://127.0.0.1:8188");
  EXPECT_EQ(c->workflow_path, path_);
  ASSERT_EQ(c->set.size(), 2u);
  EXPECT_EQ(c->set[0].name, "seed");
  EXPECT_EQ(c->set[0].node, "2");
  EXPECT_EQ(c->set[1].input, "width");
  EXPECT_THAT(c->seeds, ::testing::ElementsAre(42u, 43u, 18446744073709551615u));
  EXPECT_EQ(*c->width, 1024);
  EXPECT_FALSE(c->steps.has_value());
  EXPECT_TRUE(c->distinct_runs);
  EXPECT_EQ(c->cache_hit_threshold, absl::Milliseconds(250));
  EXPECT_EQ(c->run_timeout, absl::Minutes(20));
  EXPECT_EQ(c->free_settle, absl::Milliseconds(500));
  EXPECT_EQ(*c->pid, 4242);
}

TEST_F(ComfyUiConfigTest, Errors) {
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\nbogus: 1\n").status(),
            absl::InvalidArgumentError(
                "line 3: unknown key comfyui.bogus (known keys: cache_hit_threshold, distinct_runs, free_settle, height, "
                "pid, prompt, request_timeout, run_timeout, seeds, set, steps, url, width, workflow)"));
  EXPECT_EQ(Parse("workflow: WORKFLOW\n").status(),
            absl::InvalidArgumentError("line 1: comfyui needs comfyui.url, e.g. http://127.0.0.1:8188"));
  EXPECT_EQ(Parse("url: http://10.0.0.1:8188\nworkflow: WORKFLOW\n").status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: /nonexistent/w.json\n").status(),
            absl::NotFoundError("line 2: comfyui.workflow /nonexistent/w.json does not exist"));
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\nset: {seed: {node: \"9\", input: seed}}\nseeds: [1]\n")
                .status(),
            absl::InvalidArgumentError("line 3: comfyui.set.seed: the workflow has no node \"9\""));
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\nset:\n  seed: {node: \"2\", input: sed}\nseeds: [1]\n")
                .status(),
            absl::InvalidArgumentError("line 4: comfyui.set.seed: node 2 (ImageAddNoise) has no input \"sed\""));
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\nset:\n  seed: {node: \"2\", input: seed}\n").status(),
            absl::InvalidArgumentError("line 4: comfyui.set.seed needs a value: comfyui.seeds"));
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\nsteps: 20\n").status(),
            absl::InvalidArgumentError("line 3: comfyui.steps is given but comfyui.set has no steps target: say where "
                                       "it goes, e.g. steps: {node: \"3\", input: steps}"));
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\nset:\n  seed: {node: \"2\", input: seed}\nseeds: [-1]\n")
                .status(),
            absl::InvalidArgumentError(
                "line 5: comfyui.seeds must be a list of integers from 0 to 18446744073709551615, got '-1'"));
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\nrun_timeout: forever\n").status(),
            absl::InvalidArgumentError(
                "line 3: comfyui.run_timeout must be a positive duration such as 120s, 2m or 500ms, got 'forever'"));
  // Issue 19 case 6: a cooldown or a timeout is at most a day.
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\nfree_settle: 100000000h\n").status(),
            absl::InvalidArgumentError("line 3: comfyui.free_settle must be at most 24h, got 100000000h"));
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\ndistinct_runs: true\n").status(),
            absl::InvalidArgumentError(
                "line 3: comfyui.distinct_runs needs comfyui.set.seed: it gives every run a fresh seed"));
}

TEST_F(ComfyUiConfigTest, UiFormatWorkflowIsRefused) {
  ASSERT_TRUE(Env::Default()->WriteFileAtomically(path_, R"({"nodes": [], "links": []})").ok());
  EXPECT_EQ(Parse("url: http://127.0.0.1:8188\nworkflow: WORKFLOW\n").status(),
            absl::InvalidArgumentError(absl::StrCat("line 2: comfyui.workflow ", path_,
                                                    ": the workflow is in ComfyUI's UI format (nodes and links "
                                                    "lists); export it with \"Save (API)\"")));
}

// The graph is read and sent on to ComfyUI: a coordinator's task may name only a file inside
// allow.workflow_dirs (before it is read); the operator's own spec (`run`) is not held to it.
TEST_F(ComfyUiConfigTest, ACoordinatorsWorkflowMustLieInTheAllowedFolders) {
  const YAML::Node section = YAML::Load("url: http://127.0.0.1:8188\nworkflow: /nonexistent/w.json\n");
  EXPECT_EQ(ParseComfyUiSection(section, *allow_, Env::Default(), SpecAuthor::kCoordinator).status(),
            absl::PermissionDeniedError("workflow path /nonexistent/w.json is not in this agent's allow-list "
                                        "(allow.workflow_dirs in agent.yaml); allow.workflow_dirs is empty: this "
                                        "agent allows none"));
  // The operator's spec goes on to read the file.
  EXPECT_EQ(ParseComfyUiSection(section, *allow_, Env::Default(), SpecAuthor::kOperator).status(),
            absl::NotFoundError("line 2: comfyui.workflow /nonexistent/w.json does not exist"));
}

TEST_F(ComfyUiConfigTest, ACoordinatorsWorkflowInsideTheAllowedFoldersIsRead) {
  AllowConfig allow;
  allow.urls = {"http://127.0.0.1:8188"};
  allow.workflow_dirs = {dir_.path()};
  const AllowList list(allow, "agent.yaml");
  const YAML::Node section = YAML::Load(absl::StrCat("url: http://127.0.0.1:8188\nworkflow: ", path_, "\n"));
  absl::StatusOr<ComfyUiConfig> c = ParseComfyUiSection(section, list, Env::Default(), SpecAuthor::kCoordinator);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->workflow_path, path_);
}

TEST_F(ComfyUiConfigTest, TheExampleSpecParses) {
  const YAML::Node spec = YAML::LoadFile(std::string(BENCHFLEET_SOURCE_DIR) + "/examples/series/comfyui-sd15-txt2img.yaml");
  YAML::Node section = YAML::Clone(spec["comfyui"]);
  section["workflow"] = std::string(BENCHFLEET_SOURCE_DIR) + "/examples/series/" + section["workflow"].as<std::string>();
  absl::StatusOr<ComfyUiConfig> c = ParseComfyUiSection(section, *allow_, Env::Default());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->set.size(), 5u);
}

}  // namespace
}  // namespace benchfleet::agent::comfyui
