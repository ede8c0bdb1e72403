// The container facts of a workflow command: which command lines are container runs and what
// their image is (docker and podman, global and run options with and without values), and what
// the runtime's CLI answers (a scripted CommandRunner: no Docker engine here). The answers are
// written in the formats the CLIs print for these --format templates: `docker version --format
// '{{.Server.Version}}'` prints the engine's version ("24.0.7"); `docker image inspect --format
// '{{.Id}}{{range .RepoDigests}} {{.}}{{end}}'` the id then each repository digest; the error
// lines are Docker's own wording. The digests are made up (64 hex digits each).
#include "agent/backends/workflow/container_image.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/probes/fake_tools.h"

namespace benchfleet::agent::workflow {
namespace {

using testing::Printed;
using testing::ScriptedRunner;

constexpr char kId[] = "sha256:4c0fe3d2a1b6e0f9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5";
constexpr char kRepoDigest[] = "registry.example/workflow@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
constexpr char kVersion[] = "/usr/bin/docker version --format {{.Server.Version}}";
constexpr char kInspect[] = "/usr/bin/docker image inspect --format {{.Id}}{{range .RepoDigests}} {{.}}{{end}} workflow:6";

CommandOutput Failed(const std::string& stderr_text) {
  CommandOutput out = Printed("", 1);
  out.stderr_text = stderr_text;
  return out;
}

TEST(ParseContainerRunTest, FindsTheRuntimeAndTheImageAfterTheRunOptions) {
  std::optional<ContainerRun> run =
      ParseContainerRun({"/usr/bin/docker", "run", "--rm", "--name", "{container}", "workflow:6", "/opt/bench", "-x"});
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->runtime, "docker");
  EXPECT_EQ(run->program, "/usr/bin/docker");
  EXPECT_EQ(run->image, "workflow:6");

  run = ParseContainerRun({"/usr/local/bin/podman", "--log-level", "warn", "container", "run", "-it", "-e", "A=1",
                           "-v", "/srv:/srv:ro", "--gpus=all", "-eB=2", "--shm-size", "8g", "--init",
                           "quay.io/bench/workflow@sha256:abc", "run.sh"});
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->runtime, "podman");
  EXPECT_EQ(run->image, "quay.io/bench/workflow@sha256:abc");

  run = ParseContainerRun({"/usr/bin/docker", "--context", "gpu", "-D", "run", "-dit", "--", "img", "cmd"});
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->image, "img");

  // An image written as a placeholder: a container run whose image is not known.
  run = ParseContainerRun({"/usr/bin/docker", "run", "--rm", "{config}"});
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->image, "");
}

TEST(ParseContainerRunTest, OtherCommandsAreNotContainerRuns) {
  EXPECT_FALSE(ParseContainerRun({}).has_value());
  EXPECT_FALSE(ParseContainerRun({"/opt/bench/workflow-v6", "run", "img"}).has_value());
  EXPECT_FALSE(ParseContainerRun({"/usr/bin/dockerd", "run", "img"}).has_value());
  EXPECT_FALSE(ParseContainerRun({"/usr/bin/docker", "exec", "box", "run.sh"}).has_value());
  EXPECT_FALSE(ParseContainerRun({"/usr/bin/docker", "run", "--rm", "--name", "x"}).has_value());  // no image
}

TEST(ReadContainerFactsTest, TheEngineVersionAndTheRepositoryDigest) {
  ScriptedRunner runner;
  runner.Answer(kVersion, Printed("24.0.7\n"));
  runner.Answer(kInspect, Printed(absl::StrCat(kId, " ", kRepoDigest, "\n")));
  const ContainerFacts facts =
      ReadContainerFacts(&runner, ContainerRun{"docker", "/usr/bin/docker", "workflow:6"}, absl::Seconds(15));
  EXPECT_EQ(facts.conditions, (std::map<std::string, std::string>{{"runtime", "docker"},
                                                                  {"runtime_version", "24.0.7"},
                                                                  {"image", "workflow:6"},
                                                                  {"image_digest", kRepoDigest},
                                                                  {"image_id", kId}}));
  EXPECT_TRUE(facts.missing.empty());
  EXPECT_EQ(runner.calls, (std::vector<std::string>{kVersion, kInspect}));
}

TEST(ReadContainerFactsTest, ALocallyBuiltImageHasOnlyItsId) {
  ScriptedRunner runner;
  runner.Answer(kVersion, Printed("24.0.7\n"));
  runner.Answer(kInspect, Printed(absl::StrCat(kId, "\n")));
  const ContainerFacts facts =
      ReadContainerFacts(&runner, ContainerRun{"docker", "/usr/bin/docker", "workflow:6"}, absl::Seconds(15));
  EXPECT_EQ(facts.conditions.at("image_digest"), kId);
  EXPECT_EQ(facts.conditions.at("image_id"), kId);
}

TEST(ReadContainerFactsTest, WhatTheRuntimeCannotSayIsMissingWithItsReason) {
  ScriptedRunner runner;
  runner.Answer(kVersion, Failed("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker "
                                 "daemon running?\n"));
  runner.Answer(kInspect, Failed("Error response from daemon: No such image: workflow:6\n"));
  const ContainerFacts facts =
      ReadContainerFacts(&runner, ContainerRun{"docker", "/usr/bin/docker", "workflow:6"}, absl::Seconds(15));
  EXPECT_EQ(facts.conditions,
            (std::map<std::string, std::string>{{"runtime", "docker"}, {"image", "workflow:6"}}));
  EXPECT_EQ(facts.missing,
            (std::map<std::string, std::string>{
                {"runtime_version_error",
                 absl::StrCat(kVersion, " exited with code 1: Cannot connect to the Docker daemon at "
                                        "unix:///var/run/docker.sock. Is the docker daemon running?")},
                {"image_digest_error",
                 absl::StrCat(kInspect, " exited with code 1: Error response from daemon: No such image: workflow:6")}}));
}

TEST(ReadContainerFactsTest, PodmanIsAskedForItsOwnVersionAndOddAnswersAreRefused) {
  ScriptedRunner runner;
  runner.Answer("/usr/bin/podman version --format {{.Client.Version}}", Printed("<no value>\n"));
  runner.Answer("/usr/bin/podman image inspect --format {{.Id}}{{range .RepoDigests}} {{.}}{{end}} img",
                Printed("[]\n"));
  const ContainerFacts facts =
      ReadContainerFacts(&runner, ContainerRun{"podman", "/usr/bin/podman", "img"}, absl::Seconds(15));
  EXPECT_EQ(facts.conditions, (std::map<std::string, std::string>{{"runtime", "podman"}, {"image", "img"}}));
  EXPECT_EQ(facts.missing,
            (std::map<std::string, std::string>{
                {"runtime_version_error", "/usr/bin/podman version --format {{.Client.Version}} printed '<no value>'"},
                {"image_digest_error", "/usr/bin/podman image inspect img: not an image id: '[]'"}}));
}

TEST(ReadContainerFactsTest, APlaceholderImageIsNotInspectedAndAMissingRuntimeSaysSo) {
  ScriptedRunner runner;  // answers nothing: NOT_FOUND for every call
  const ContainerFacts facts = ReadContainerFacts(&runner, ContainerRun{"docker", "docker", ""}, absl::Seconds(15));
  EXPECT_EQ(facts.conditions, (std::map<std::string, std::string>{{"runtime", "docker"}}));
  EXPECT_EQ(facts.missing,
            (std::map<std::string, std::string>{
                {"runtime_version_error", "docker: not found on PATH"},
                {"image_digest_error", "the command's image is a placeholder: the agent cannot name it before the run"}}));
  EXPECT_EQ(runner.calls, (std::vector<std::string>{"docker version --format {{.Server.Version}}"}));
}

}  // namespace
}  // namespace benchfleet::agent::workflow
