// Every agent.yaml the deployment files give an agent is one the agent accepts: parsed with the
// agent's own parser (agent/config), so an unknown key or a wrong type fails here and not on a
// node. The chart's (rendered by helm with the defaults, each example and TLS off; skipped
// without helm) and the compose file's.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/config/agent_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/deploy/deploy_files.h"
#include "tests/deploy/run_command.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::testing {
namespace {

namespace fs = std::filesystem;
using ::benchfleet::agent::AgentConfig;
using ::benchfleet::agent::ParseAgentConfig;

struct RenderedConfig {
  std::string configmap;
  std::string yaml;
};

// The agent.yaml of every agent ConfigMap `helm template` renders with these arguments.
std::vector<RenderedConfig> ChartAgentConfigs(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {FindHelm(), "template", "bf", SourceDir() + "/helm/benchfleet", "--namespace", "fleet"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<RenderedConfig> out;
  for (const YAML::Node& doc : YAML::LoadAll(r.out)) {
    if (!doc.IsMap() || doc["kind"].as<std::string>("") != "ConfigMap") continue;
    if (!doc["data"] || !doc["data"]["agent.yaml"]) continue;
    out.push_back({doc["metadata"]["name"].as<std::string>(), doc["data"]["agent.yaml"].as<std::string>()});
  }
  return out;
}

TEST(AgentConfigsTest, TheChartsAgentYamlParsesWithTlsAndTheServiceAddress) {
  if (FindHelm().empty()) GTEST_SKIP() << "helm not found: run scripts/setup";
  std::vector<std::vector<std::string>> renderings = {{}};
  for (const auto& e : fs::directory_iterator(SourceDir() + "/helm/benchfleet/examples")) {
    renderings.push_back({"-f", e.path().string()});
  }
  int parsed = 0;
  for (const auto& extra : renderings) {
    for (const RenderedConfig& c : ChartAgentConfigs(extra)) {
      absl::StatusOr<AgentConfig> config = ParseAgentConfig(c.yaml, c.configmap);
      ASSERT_TRUE(config.ok()) << c.configmap << ": " << config.status() << "\n" << c.yaml;
      EXPECT_EQ(config->coordinator, "bf-benchfleet-coordinator.fleet.svc:7443") << c.configmap;
      EXPECT_EQ(config->ca_cert, "/etc/benchfleet/ca/ca.pem") << c.configmap;
      EXPECT_FALSE(config->plaintext) << c.configmap;
      EXPECT_EQ(config->state_dir, "/var/lib/benchfleet") << c.configmap;
      EXPECT_EQ(config->metrics_listen, "0.0.0.0:9465") << c.configmap;
      EXPECT_TRUE(config->labels.count("accelerator")) << c.configmap;
      ++parsed;
    }
  }
  // Defaults: nvidia and amd; single-host: one; gpu-fleet: three; external-database: none.
  EXPECT_EQ(parsed, 6);

  std::vector<RenderedConfig> plain = ChartAgentConfigs({"--set", "tls.enabled=false"});
  ASSERT_EQ(plain.size(), 2u);
  for (const RenderedConfig& c : plain) {
    absl::StatusOr<AgentConfig> config = ParseAgentConfig(c.yaml, c.configmap);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_TRUE(config->plaintext);
    EXPECT_EQ(config->ca_cert, "");
  }
}

TEST(AgentConfigsTest, SeveralCoordinatorAddressesReachAgentYamlInOrder) {
  if (FindHelm().empty()) GTEST_SKIP() << "helm not found: run scripts/setup";
  std::vector<RenderedConfig> configs =
      ChartAgentConfigs({"--set", "agents.coordinatorAddresses={coord-a.example:7443,coord-b.example:7443}"});
  ASSERT_EQ(configs.size(), 2u);
  for (const RenderedConfig& c : configs) {
    absl::StatusOr<AgentConfig> config = ParseAgentConfig(c.yaml, c.configmap);
    ASSERT_TRUE(config.ok()) << c.configmap << ": " << config.status() << "\n" << c.yaml;
    EXPECT_EQ(config->coordinator, "coord-a.example:7443,coord-b.example:7443") << c.configmap;
  }
}

TEST(AgentConfigsTest, TheComposeAgentYamlParses) {
  absl::StatusOr<std::string> text = ReadTextFile(SourceDir() + "/deploy/compose/agent.yaml");
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(*text, "deploy/compose/agent.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->coordinator, "coordinator:7443");
  EXPECT_EQ(config->ca_cert, "/run/benchfleet/ca/ca.pem");
  EXPECT_EQ(config->state_dir, "/var/lib/benchfleet");
  EXPECT_FALSE(config->plaintext);
}

}  // namespace
}  // namespace benchfleet::testing
