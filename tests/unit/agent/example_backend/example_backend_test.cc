// A backend added as one folder and one line (echo/, CMakeLists.txt here) is a backend like the
// product's: `benchfleet-agent run` runs its series, the runner stamps its figures' declaration on
// its records, and `benchfleet guide` shows its headline figure by its label, SIMULATED, with no
// line of the agent, the guide or the spec's schema naming it. And for every registered backend,
// the section.schema.json in its folder lists exactly the keys the backend accepts.
#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/backends/registry.h"
#include "common/env.h"
#include "common/series_folder.h"
#include "common/string_views.h"
#include "nlohmann/json.hpp"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::HasSubstr;
using testing::ScopedTempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Runs a shell command line; its exit code.
int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ExampleBackendTest, ItsSeriesRunsAndItsHeadlineFigureReachesTheGuide) {
  ScopedTempDir tmp;
  const std::string dir = tmp.path();
  Write(dir + "/agent.yaml", "allow:\n  backends: [echo]\n");
  Write(dir + "/spec.yaml",
        "series: echo-series\ntask: echo-copy\nbackend: echo\necho:\n  text: hello\n"
        "matrix:\n  repeat: [100, 1000]\nruns:\n  cold: 1\n  warm: 2\n");
  const std::string log = dir + "/run.log";
  ASSERT_EQ(Shell(absl::StrCat("env -u BENCHFLEET_COORDINATOR '", BENCHFLEET_AGENT_EXAMPLE_BINARY, "' run '", dir,
                               "/spec.yaml' --out '", dir, "/series' --config '", dir, "/agent.yaml' --state-dir '",
                               dir, "/state' >'", log, "' 2>&1")),
            0)
      << ReadAll(log);
  EXPECT_THAT(ReadAll(log), HasSubstr("series echo-series (task echo-copy, backend echo"));

  absl::StatusOr<std::vector<SourcedRecord>> records = ReadRecords(Env::Default(), dir + "/series");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 6u);  // 2 combinations x (1 cold + 2 warm)
  for (const auto& [record, file, line] : *records) {
    EXPECT_EQ(record.backend(), "echo");
    EXPECT_TRUE(record.simulated());
    EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_OK);
    ASSERT_GE(record.metrics_size(), 1);
    const v1::Metric& main = record.metrics(0);
    EXPECT_EQ(main.name(), "echo_bytes_per_second");
    EXPECT_EQ(main.headline(), 1u);  // stamped by the runner from echo/figures.h
    EXPECT_EQ(main.label(), "echoed bytes/s");
    EXPECT_EQ(main.better(), v1::BETTER_HIGHER);
    EXPECT_GT(main.value(), 0);
  }

  const std::string guide_log = dir + "/guide.log";
  ASSERT_EQ(Shell(absl::StrCat("'", BENCHFLEET_BINARY, "' guide --files '", dir, "/series' --out '", dir,
                               "/guide' >'", guide_log, "' 2>&1")),
            0)
      << ReadAll(guide_log);
  const std::string guide = ReadAll(dir + "/guide/guide.en.md");
  EXPECT_THAT(guide, HasSubstr("echo-copy"));
  EXPECT_THAT(guide, HasSubstr("echoed bytes/s"));
  EXPECT_THAT(guide, HasSubstr("SIMULATED"));
}

// The keys a backend accepts, as it says when given an unknown one: "... (known keys: a, b)".
std::set<std::string> KnownKeys(const std::string& name, const RegisteredBackend& backend, const std::string& dir) {
  const AllowList allow(AllowConfig{}, "agent.yaml");
  BackendContext context;
  context.env = Env::Default();
  context.allow = &allow;
  context.work_dir = dir;
  absl::StatusOr<std::unique_ptr<Backend>> built = backend.factory(YAML::Load("zz_not_a_key: 1\n"), context);
  EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument) << name;
  const std::string message(built.status().message());
  const std::string marker = "(known keys: ";
  const size_t at = message.find(marker);
  if (at == std::string::npos || !message.ends_with(")")) {
    ADD_FAILURE() << name << ": " << message;
    return {};
  }
  EXPECT_THAT(message, HasSubstr(absl::StrCat("unknown key ", name, ".zz_not_a_key"))) << name;
  const std::string list = message.substr(at + marker.size(), message.size() - at - marker.size() - 1);
  std::set<std::string> keys;
  for (absl::string_view key : absl::StrSplit(list, ", ")) keys.emplace(key);
  return keys;
}

TEST(ExampleBackendTest, EachBackendsSectionSchemaListsTheKeysItAccepts) {
  ScopedTempDir tmp;
  std::set<std::string> names;
  for (const auto& [name, backend] : RegisteredBackends()) {
    names.insert(name);
    const std::string path = absl::StrCat(BENCHFLEET_SOURCE_DIR, "/", ToAbsl(backend.folder), "/section.schema.json");
    absl::StatusOr<std::string> text = Env::Default()->ReadFile(path);
    ASSERT_TRUE(text.ok()) << name << ": " << text.status();
    const nlohmann::json schema = nlohmann::json::parse(*text);
    std::set<std::string> listed;
    for (const auto& [key, value] : schema["properties"].items()) {
      listed.insert(key);
      EXPECT_TRUE(value.contains("description")) << name << "." << key;
    }
    EXPECT_EQ(schema["additionalProperties"], false) << name;
    EXPECT_EQ(listed, KnownKeys(name, backend, tmp.path())) << path;
  }
  EXPECT_EQ(names, (std::set<std::string>{"comfyui", "echo", "llama-server", "openai", "workflow"}));
}

}  // namespace
}  // namespace benchfleet::agent
