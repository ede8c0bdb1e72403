// Checks of the Helm chart helm/benchfleet/: `helm lint --strict`, and `helm template` with the
// default values and each example values file, parsed and checked object by object (known kinds,
// every Secret and ConfigMap a pod names rendered or declared existing in the values, the
// dashboards, the probes, the security contexts, the accelerators' resources); the schema
// refusing bad values; the chart's dashboards identical to deploy/grafana/dashboards/.
// Needs helm (scripts/setup installs it in ~/.cache/benchfleet/bin); skipped without it.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/deploy/deploy_files.h"
#include "tests/deploy/run_command.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::string ChartDir() { return SourceDir() + "/helm/benchfleet"; }

#define REQUIRE_HELM()                                                              \
  if (FindHelm().empty()) GTEST_SKIP() << "helm not found: run scripts/setup (it installs " \
                                      "~/.cache/benchfleet/bin/helm)"

// `helm template bf CHART -n benchfleet` plus `extra` (e.g. {"-f", file} or {"--set", "a=b"}).
CommandResult Template(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {FindHelm(), "template", "bf", ChartDir(), "--namespace", "benchfleet"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunCommand(argv);
}

struct Object {
  std::string api_version;
  std::string kind;
  std::string name;
  YAML::Node node;
};

std::vector<Object> Parse(const std::string& rendered) {
  std::vector<Object> objects;
  for (const YAML::Node& doc : YAML::LoadAll(rendered)) {
    if (!doc.IsMap()) continue;  // an empty document between two `---`
    objects.push_back({doc["apiVersion"].as<std::string>(""), doc["kind"].as<std::string>(""),
                       doc["metadata"]["name"].as<std::string>(""), doc});
  }
  return objects;
}

// Renders and parses; fails the test (and returns nothing) when helm fails.
std::vector<Object> Render(const std::vector<std::string>& extra) {
  CommandResult r = Template(extra);
  EXPECT_EQ(r.exit_code, 0) << absl::StrJoin(extra, " ") << "\n" << r.err;
  if (r.exit_code != 0) return {};
  return Parse(r.out);
}

std::vector<const Object*> OfKind(const std::vector<Object>& objects, const std::string& kind) {
  std::vector<const Object*> out;
  for (const Object& o : objects) {
    if (o.kind == kind) out.push_back(&o);
  }
  return out;
}

const Object* Find(const std::vector<Object>& objects, const std::string& kind, const std::string& name) {
  for (const Object& o : objects) {
    if (o.kind == kind && o.name == name) return &o;
  }
  return nullptr;
}

// The pod template of a workload, or a null node.
YAML::Node PodSpec(const Object& o) {
  if (o.kind == "Deployment" || o.kind == "DaemonSet" || o.kind == "StatefulSet") {
    return o.node["spec"]["template"]["spec"];
  }
  return YAML::Node();
}

std::vector<YAML::Node> Containers(const YAML::Node& pod) {
  std::vector<YAML::Node> out;
  for (const char* key : {"initContainers", "containers"}) {
    if (!pod[key]) continue;
    for (const YAML::Node& c : pod[key]) out.push_back(c);
  }
  return out;
}

// The names a values file gives, with the chart's defaults under it: a.b.c -> string.
std::string ValueAt(const std::vector<YAML::Node>& layers, const std::vector<std::string>& path) {
  std::string found;
  for (const YAML::Node& layer : layers) {
    YAML::Node n = YAML::Clone(layer);
    bool ok = true;
    for (const std::string& key : path) {
      if (!n.IsMap() || !n[key]) {
        ok = false;
        break;
      }
      n = n[key];
    }
    if (ok && n.IsScalar()) found = n.as<std::string>();
  }
  return found;
}

// The Secrets the values declare as existing (created outside the chart).
std::set<std::string> DeclaredExistingSecrets(const std::string& values_file) {
  std::vector<YAML::Node> layers = {YAML::LoadFile(ChartDir() + "/values.yaml")};
  if (!values_file.empty()) layers.push_back(YAML::LoadFile(values_file));
  std::set<std::string> names;
  for (const auto& path : std::vector<std::vector<std::string>>{{"tls", "existingSecret"},
                                                                {"operatorToken", "existingSecret"},
                                                                {"database", "existingSecret"},
                                                                {"agents", "enrollToken", "existingSecret"}}) {
    std::string v = ValueAt(layers, path);
    if (!v.empty()) names.insert(v);
  }
  return names;
}

struct Reference {
  std::string kind;  // Secret or ConfigMap
  std::string name;
  std::vector<std::string> keys;  // the keys it names (items, secretKeyRef.key); empty: all
  std::string where;
};

std::vector<Reference> References(const Object& o) {
  std::vector<Reference> refs;
  YAML::Node pod = PodSpec(o);
  if (!pod.IsMap()) return refs;
  const std::string where = o.kind + "/" + o.name;
  auto item_keys = [](const YAML::Node& source) {
    std::vector<std::string> keys;
    if (source["items"]) {
      for (const YAML::Node& item : source["items"]) keys.push_back(item["key"].as<std::string>());
    }
    return keys;
  };
  if (pod["volumes"]) {
    for (const YAML::Node& v : pod["volumes"]) {
      if (v["secret"]) refs.push_back({"Secret", v["secret"]["secretName"].as<std::string>(), item_keys(v["secret"]), where});
      if (v["configMap"]) refs.push_back({"ConfigMap", v["configMap"]["name"].as<std::string>(), item_keys(v["configMap"]), where});
      if (v["projected"]) {
        for (const YAML::Node& s : v["projected"]["sources"]) {
          if (s["secret"]) refs.push_back({"Secret", s["secret"]["name"].as<std::string>(), item_keys(s["secret"]), where});
          if (s["configMap"]) refs.push_back({"ConfigMap", s["configMap"]["name"].as<std::string>(), item_keys(s["configMap"]), where});
        }
      }
    }
  }
  for (const YAML::Node& c : Containers(pod)) {
    if (c["envFrom"]) {
      for (const YAML::Node& e : c["envFrom"]) {
        if (e["secretRef"]) refs.push_back({"Secret", e["secretRef"]["name"].as<std::string>(), {}, where});
        if (e["configMapRef"]) refs.push_back({"ConfigMap", e["configMapRef"]["name"].as<std::string>(), {}, where});
      }
    }
    if (c["env"]) {
      for (const YAML::Node& e : c["env"]) {
        if (!e["valueFrom"]) continue;
        if (YAML::Node r = e["valueFrom"]["secretKeyRef"]) {
          refs.push_back({"Secret", r["name"].as<std::string>(), {r["key"].as<std::string>()}, where});
        }
        if (YAML::Node r = e["valueFrom"]["configMapKeyRef"]) {
          refs.push_back({"ConfigMap", r["name"].as<std::string>(), {r["key"].as<std::string>()}, where});
        }
      }
    }
  }
  return refs;
}

// The checks every rendering must pass. values_file: "" for the defaults.
void CheckRendering(const std::vector<Object>& objects, const std::string& values_file) {
  SCOPED_TRACE(values_file.empty() ? "default values" : values_file);
  ASSERT_FALSE(objects.empty());

  // Kinds and API versions this chart may produce, nothing else (no CRDs, no RBAC).
  const std::set<std::pair<std::string, std::string>> known = {
      {"v1", "ConfigMap"},          {"v1", "Secret"},         {"v1", "Service"},
      {"v1", "ServiceAccount"},     {"apps/v1", "Deployment"}, {"apps/v1", "DaemonSet"},
      {"apps/v1", "StatefulSet"},   {"policy/v1", "PodDisruptionBudget"},
      {"monitoring.coreos.com/v1", "ServiceMonitor"}};
  std::set<std::string> seen;
  for (const Object& o : objects) {
    EXPECT_TRUE(known.count({o.api_version, o.kind})) << o.api_version << " " << o.kind << " " << o.name;
    EXPECT_FALSE(o.name.empty()) << o.kind;
    EXPECT_LE(o.name.size(), 63u) << o.name;
    EXPECT_TRUE(seen.insert(o.kind + "/" + o.name).second) << "twice: " << o.kind << "/" << o.name;
  }

  // Every Secret and ConfigMap a pod names is rendered here or declared existing in the values;
  // the keys it names exist in the rendered ones.
  const std::set<std::string> existing = DeclaredExistingSecrets(values_file);
  for (const Object& o : objects) {
    for (const Reference& ref : References(o)) {
      const Object* target = Find(objects, ref.kind, ref.name);
      if (target == nullptr) {
        EXPECT_TRUE(ref.kind == "Secret" && existing.count(ref.name))
            << ref.where << " names " << ref.kind << " " << ref.name
            << ", neither rendered nor declared existing (" << absl::StrJoin(existing, ", ") << ")";
        continue;
      }
      for (const std::string& key : ref.keys) {
        EXPECT_TRUE(target->node["data"] && target->node["data"][key])
            << ref.where << " names key " << key << " of " << ref.kind << " " << ref.name;
      }
    }
  }

  // Every pod: its mounts have volumes; containers non-root, read-only root, no capabilities,
  // not privileged unless the values ask (checked by the privileged tests).
  for (const Object& o : objects) {
    YAML::Node pod = PodSpec(o);
    if (!pod.IsMap()) continue;
    SCOPED_TRACE(o.kind + "/" + o.name);
    EXPECT_FALSE(pod["automountServiceAccountToken"].as<bool>(true));
    std::set<std::string> volumes;
    if (pod["volumes"]) {
      for (const YAML::Node& v : pod["volumes"]) volumes.insert(v["name"].as<std::string>());
    }
    if (o.node["spec"]["volumeClaimTemplates"]) {
      for (const YAML::Node& t : o.node["spec"]["volumeClaimTemplates"]) volumes.insert(t["metadata"]["name"].as<std::string>());
    }
    EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>(false));
    for (const YAML::Node& c : Containers(pod)) {
      const std::string name = c["name"].as<std::string>();
      if (c["volumeMounts"]) {
        for (const YAML::Node& m : c["volumeMounts"]) {
          EXPECT_TRUE(volumes.count(m["name"].as<std::string>())) << name << " mounts " << m["name"];
        }
      }
      YAML::Node sc = c["securityContext"];
      ASSERT_TRUE(sc) << name;
      EXPECT_TRUE(sc["readOnlyRootFilesystem"].as<bool>(false)) << name;
      if (sc["privileged"].as<bool>(false)) continue;  // the privileged tests look at these
      EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>(true)) << name;
      EXPECT_THAT(sc["capabilities"]["drop"].as<std::vector<std::string>>(std::vector<std::string>{}), ElementsAre("ALL"))
          << name;
      std::vector<std::string> added = sc["capabilities"]["add"].as<std::vector<std::string>>(std::vector<std::string>{});
      if (name == "prepare-state-dir") {
        // The one root step: chown of the agent's hostPath state directory.
        EXPECT_THAT(added, ElementsAre("CHOWN"));
        EXPECT_EQ(sc["runAsUser"].as<int>(-1), 0);
      } else {
        EXPECT_THAT(added, ElementsAre()) << name;
        EXPECT_TRUE(!sc["runAsUser"] || sc["runAsUser"].as<int>() != 0) << name;
      }
      // Secrets come from files: no token or database URL on a command line.
      for (const char* key : {"args", "command"}) {
        if (!c[key]) continue;
        for (const YAML::Node& a : c[key]) {
          const std::string arg = a.as<std::string>();
          EXPECT_FALSE(absl::StrContains(arg, "bft_") || absl::StrContains(arg, "bfe_") ||
                       absl::StrContains(arg, "postgresql://") || absl::StartsWith(arg, "--database-url="))
              << name << ": " << arg;
        }
      }
    }
  }

  // The coordinator: gRPC probes on its plaintext health port (its gRPC port without TLS), the Service's ports, the database URL and the
  // TLS files from Secrets.
  const Object* deployment = nullptr;
  for (const Object* d : OfKind(objects, "Deployment")) {
    if (absl::EndsWith(d->name, "-coordinator")) deployment = d;
  }
  ASSERT_NE(deployment, nullptr);
  YAML::Node container = PodSpec(*deployment)["containers"][0];
  int grpc_port = 0;
  int health_port = 0;
  for (const YAML::Node& p : container["ports"]) {
    if (p["name"].as<std::string>() == "grpc") grpc_port = p["containerPort"].as<int>();
    if (p["name"].as<std::string>() == "health") health_port = p["containerPort"].as<int>();
  }
  ASSERT_GT(grpc_port, 0);
  const std::vector<std::string> all_args = container["args"].as<std::vector<std::string>>();
  const bool plaintext = std::find(all_args.begin(), all_args.end(), "--plaintext") != all_args.end();
  if (!plaintext) {
    // TLS on the gRPC port: the kubelet's plaintext probes go to the health-only port.
    ASSERT_GT(health_port, 0);
    EXPECT_THAT(all_args, ::testing::Contains(absl::StrCat("--health-listen=0.0.0.0:", health_port)));
  }
  for (const char* probe : {"readinessProbe", "livenessProbe"}) {
    ASSERT_TRUE(container[probe]["grpc"]) << probe << " is not a gRPC probe";
    EXPECT_EQ(container[probe]["grpc"]["port"].as<int>(), plaintext ? grpc_port : health_port) << probe;
    EXPECT_FALSE(container[probe]["grpc"]["service"]) << probe << ": the server's overall health, service \"\"";
  }
  const std::vector<std::string> args = container["args"].as<std::vector<std::string>>();
  EXPECT_THAT(args, ::testing::Contains("--database-url-file=/etc/benchfleet/database/url"));
  EXPECT_THAT(args, ::testing::Contains("--operator-token-file=/etc/benchfleet/operator/token"));
  const Object* service = Find(objects, "Service", deployment->name);
  ASSERT_NE(service, nullptr);
  std::map<std::string, std::string> service_ports;
  for (const YAML::Node& p : service->node["spec"]["ports"]) {
    service_ports[p["name"].as<std::string>()] = p["targetPort"].as<std::string>();
  }
  EXPECT_EQ(service_ports, (std::map<std::string, std::string>{{"grpc", "grpc"}, {"metrics", "metrics"}}));

  // Agents: an accelerator's resource for each GPU DaemonSet; ca.pem and nothing else of the TLS
  // Secret; the state directory on the node.
  for (const Object* ds : OfKind(objects, "DaemonSet")) {
    SCOPED_TRACE(ds->name);
    YAML::Node pod = PodSpec(*ds);
    YAML::Node agent = pod["containers"][0];
    YAML::Node limits = agent["resources"]["limits"];
    const std::string set = ds->node["metadata"]["labels"]["benchfleet.io/agent-set"].as<std::string>();
    const bool nvidia = limits["nvidia.com/gpu"].IsDefined();
    const bool amd = limits["amd.com/gpu"].IsDefined();
    EXPECT_FALSE(nvidia && amd);
    bool state_on_host = false;
    for (const YAML::Node& v : pod["volumes"]) {
      if (v["name"].as<std::string>() == "state") state_on_host = v["hostPath"].IsDefined();
      if (v["secret"] && v["secret"]["items"]) {
        for (const YAML::Node& item : v["secret"]["items"]) {
          EXPECT_NE(item["key"].as<std::string>(), "ca-key.pem") << "an agent must never see the CA key";
          EXPECT_NE(item["key"].as<std::string>(), "server-key.pem");
        }
      }
      if (v["secret"] && v["secret"]["secretName"].as<std::string>() != "" && !v["secret"]["items"]) {
        ADD_FAILURE() << "an agent mounts a whole Secret: " << v["name"];
      }
    }
    EXPECT_TRUE(state_on_host);
    EXPECT_FALSE(pod["hostIPC"].as<bool>(false));
    const std::string config_name = pod["volumes"][0]["configMap"]["name"].as<std::string>("");
    const Object* config = Find(objects, "ConfigMap", config_name);
    ASSERT_NE(config, nullptr) << config_name;
    YAML::Node agent_yaml = YAML::Load(config->node["data"]["agent.yaml"].as<std::string>());
    EXPECT_EQ(agent_yaml["state_dir"].as<std::string>(), "/var/lib/benchfleet");
    EXPECT_TRUE(agent_yaml["labels"]["accelerator"].IsDefined());
    const std::string accelerator = agent_yaml["labels"]["accelerator"].as<std::string>();
    EXPECT_EQ(nvidia, accelerator == "nvidia") << set;
    EXPECT_EQ(amd, accelerator == "amd") << set;
  }

  // Every object carries the chart's labels.
  for (const Object& o : objects) {
    EXPECT_EQ(o.node["metadata"]["labels"]["app.kubernetes.io/instance"].as<std::string>(""), "bf") << o.name;
  }
}

std::vector<std::string> ExampleFiles() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(ChartDir() + "/examples")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Base(const std::string& path) { return fs::path(path).filename().string(); }

TEST(HelmChartTest, ExamplesAreTheThreeDocumentedOnes) {
  std::vector<std::string> names;
  for (const std::string& f : ExampleFiles()) names.push_back(Base(f));
  EXPECT_THAT(names, ElementsAre("external-database.yaml", "gpu-fleet.yaml", "single-host.yaml"));
}

TEST(HelmChartTest, LintStrictPassesWithDefaultsAndEachExample) {
  REQUIRE_HELM();
  CommandResult r = RunCommand({FindHelm(), "lint", "--strict", ChartDir()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const std::string& f : ExampleFiles()) {
    CommandResult e = RunCommand({FindHelm(), "lint", "--strict", ChartDir(), "-f", f});
    EXPECT_EQ(e.exit_code, 0) << Base(f) << "\n" << e.out << e.err;
  }
}

TEST(HelmChartTest, DefaultValuesRenderTwoCoordinatorsAndTheGpuAgents) {
  REQUIRE_HELM();
  std::vector<Object> objects = Render({});
  CheckRendering(objects, "");
  const Object* d = Find(objects, "Deployment", "bf-benchfleet-coordinator");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->node["spec"]["replicas"].as<int>(), 2);
  EXPECT_EQ(PodSpec(*d)["containers"][0]["readinessProbe"]["grpc"]["port"].as<int>(), 7444);
  EXPECT_NE(Find(objects, "PodDisruptionBudget", "bf-benchfleet-coordinator"), nullptr);

  std::vector<std::string> daemonsets;
  for (const Object* ds : OfKind(objects, "DaemonSet")) daemonsets.push_back(ds->name);
  EXPECT_THAT(daemonsets, UnorderedElementsAre("bf-benchfleet-agent-nvidia", "bf-benchfleet-agent-amd"));
  const Object* nvidia = Find(objects, "DaemonSet", "bf-benchfleet-agent-nvidia");
  YAML::Node pod = PodSpec(*nvidia);
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 1);
  EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.present"].as<std::string>(), "true");
  EXPECT_EQ(pod["tolerations"][0]["key"].as<std::string>(), "nvidia.com/gpu");
  EXPECT_FALSE(pod["hostNetwork"].as<bool>(false));
  EXPECT_FALSE(pod["hostPID"].as<bool>(false));
  const Object* amd = Find(objects, "DaemonSet", "bf-benchfleet-agent-amd");
  EXPECT_EQ(PodSpec(*amd)["containers"][0]["resources"]["limits"]["amd.com/gpu"].as<int>(), 1);

  // No trial database, no ServiceMonitor by default; a generated operator token.
  EXPECT_TRUE(OfKind(objects, "StatefulSet").empty());
  EXPECT_TRUE(OfKind(objects, "ServiceMonitor").empty());
  const Object* token = Find(objects, "Secret", "bf-benchfleet-operator-token");
  ASSERT_NE(token, nullptr);
  EXPECT_EQ(token->node["data"]["token"].as<std::string>().size(), 64u);  // base64 of bft_ + 43
}

TEST(HelmChartTest, EachExampleRendersAndPassesTheChecks) {
  REQUIRE_HELM();
  for (const std::string& f : ExampleFiles()) {
    std::vector<Object> objects = Render({"-f", f});
    CheckRendering(objects, f);
    const std::string name = Base(f);
    if (name == "single-host.yaml") {
      EXPECT_EQ(Find(objects, "Deployment", "bf-benchfleet-coordinator")->node["spec"]["replicas"].as<int>(), 1);
      EXPECT_NE(Find(objects, "StatefulSet", "bf-benchfleet-postgresql"), nullptr);
      EXPECT_NE(Find(objects, "Service", "bf-benchfleet-postgresql"), nullptr);
      const Object* db = Find(objects, "Secret", "bf-benchfleet-postgresql");
      ASSERT_NE(db, nullptr);
      EXPECT_TRUE(db->node["data"]["url"] && db->node["data"]["password"]);
      EXPECT_EQ(OfKind(objects, "DaemonSet").size(), 1u);
      EXPECT_EQ(OfKind(objects, "PodDisruptionBudget").size(), 0u);  // one replica
    } else if (name == "gpu-fleet.yaml") {
      EXPECT_EQ(Find(objects, "Deployment", "bf-benchfleet-coordinator")->node["spec"]["replicas"].as<int>(), 3);
      EXPECT_EQ(OfKind(objects, "ServiceMonitor").size(), 2u);
      const Object* h100 = Find(objects, "DaemonSet", "bf-benchfleet-agent-h100");
      ASSERT_NE(h100, nullptr);
      EXPECT_EQ(PodSpec(*h100)["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 8);
      const Object* mi300x = Find(objects, "DaemonSet", "bf-benchfleet-agent-mi300x");
      ASSERT_NE(mi300x, nullptr);
      EXPECT_EQ(PodSpec(*mi300x)["containers"][0]["resources"]["limits"]["amd.com/gpu"].as<int>(), 8);
      EXPECT_EQ(PodSpec(*mi300x)["securityContext"]["supplementalGroups"].as<std::vector<int>>(),
                (std::vector<int>{44, 110}));
      for (const Object* sm : OfKind(objects, "ServiceMonitor")) {
        EXPECT_EQ(sm->node["spec"]["jobLabel"].as<std::string>(), "benchfleet.io/job");
      }
      EXPECT_EQ(Find(objects, "Service", "bf-benchfleet-coordinator")->node["metadata"]["labels"]["benchfleet.io/job"].as<std::string>(),
                "benchfleet-coordinator");
      EXPECT_EQ(Find(objects, "Service", "bf-benchfleet-agents")->node["metadata"]["labels"]["benchfleet.io/job"].as<std::string>(),
                "benchfleet-agent");
    } else if (name == "external-database.yaml") {
      EXPECT_TRUE(OfKind(objects, "DaemonSet").empty());
      EXPECT_TRUE(OfKind(objects, "StatefulSet").empty());
      EXPECT_TRUE(OfKind(objects, "Secret").empty()) << "every secret is an existing one";
      YAML::Node pod = PodSpec(*Find(objects, "Deployment", "bf-benchfleet-coordinator"));
      bool found = false;
      for (const YAML::Node& v : pod["volumes"]) {
        if (v["name"].as<std::string>() != "database") continue;
        found = true;
        EXPECT_EQ(v["secret"]["secretName"].as<std::string>(), "prod-benchfleet-db");
        EXPECT_EQ(v["secret"]["items"][0]["key"].as<std::string>(), "DATABASE_URL");
        EXPECT_EQ(v["secret"]["items"][0]["path"].as<std::string>(), "url");
      }
      EXPECT_TRUE(found);
    }
  }
}

TEST(HelmChartTest, DashboardsAreConfigMapsForGrafanasSidecarWithTheSourceFiles) {
  REQUIRE_HELM();
  absl::StatusOr<std::vector<Dashboard>> dashboards = LoadDashboards();
  ASSERT_TRUE(dashboards.ok()) << dashboards.status();
  ASSERT_EQ(dashboards->size(), 4u);
  std::vector<Object> objects = Render({});
  std::map<std::string, nlohmann::json> rendered;
  for (const Object* cm : OfKind(objects, "ConfigMap")) {
    if (cm->node["metadata"]["labels"]["grafana_dashboard"].as<std::string>("") != "1") continue;
    for (const auto& kv : cm->node["data"]) {
      rendered[kv.first.as<std::string>()] = nlohmann::json::parse(kv.second.as<std::string>());
    }
  }
  ASSERT_EQ(rendered.size(), dashboards->size());
  for (const Dashboard& d : *dashboards) {
    ASSERT_TRUE(rendered.count(d.file)) << d.file;
    EXPECT_EQ(rendered[d.file], d.json) << d.file;
  }
  // Turned off, they are gone.
  std::vector<Object> without = Render({"--set", "grafana.dashboards.enabled=false"});
  for (const Object* cm : OfKind(without, "ConfigMap")) {
    EXPECT_FALSE(cm->node["metadata"]["labels"]["grafana_dashboard"].IsDefined()) << cm->name;
  }
}

TEST(HelmChartTest, ChartDashboardsAreIdenticalToDeployGrafanaDashboards) {
  // Helm does not follow links out of a chart: the chart keeps a copy (helm/sync-dashboards.sh).
  const fs::path src = fs::path(SourceDir()) / "deploy/grafana/dashboards";
  const fs::path copy = fs::path(ChartDir()) / "dashboards";
  std::set<std::string> src_files, copy_files;
  for (const auto& e : fs::directory_iterator(src)) src_files.insert(e.path().filename().string());
  for (const auto& e : fs::directory_iterator(copy)) copy_files.insert(e.path().filename().string());
  ASSERT_EQ(src_files, copy_files) << "run helm/sync-dashboards.sh";
  for (const std::string& f : src_files) {
    absl::StatusOr<std::string> a = ReadTextFile((src / f).string());
    absl::StatusOr<std::string> b = ReadTextFile((copy / f).string());
    ASSERT_TRUE(a.ok() && b.ok()) << f;
    EXPECT_TRUE(*a == *b) << f << " differs from its copy in helm/benchfleet/dashboards: run helm/sync-dashboards.sh";
  }
}

std::vector<std::string> PrivilegedContainers(const std::vector<Object>& objects) {
  std::vector<std::string> out;
  for (const Object& o : objects) {
    YAML::Node pod = PodSpec(o);
    if (!pod.IsMap()) continue;
    for (const YAML::Node& c : Containers(pod)) {
      if (c["securityContext"]["privileged"].as<bool>(false)) out.push_back(o.name + "/" + c["name"].as<std::string>());
    }
  }
  return out;
}

TEST(HelmChartTest, NoPrivilegedContainerUnlessTheValuesAskForOne) {
  REQUIRE_HELM();
  EXPECT_THAT(PrivilegedContainers(Render({})), ElementsAre());
  for (const std::string& f : ExampleFiles()) {
    EXPECT_THAT(PrivilegedContainers(Render({"-f", f})), ElementsAre()) << Base(f);
  }
  std::vector<Object> asked = Render({"--set", "agents.daemonsets.nvidia.privileged=true"});
  EXPECT_THAT(PrivilegedContainers(asked), ElementsAre("bf-benchfleet-agent-nvidia/agent"));
  // Host namespaces only when asked, too.
  std::vector<Object> host = Render({"--set", "agents.host.network=true", "--set", "agents.host.pid=true"});
  YAML::Node pod = PodSpec(*Find(host, "DaemonSet", "bf-benchfleet-agent-amd"));
  EXPECT_TRUE(pod["hostNetwork"].as<bool>(false));
  EXPECT_TRUE(pod["hostPID"].as<bool>(false));
  EXPECT_EQ(pod["dnsPolicy"].as<std::string>(), "ClusterFirstWithHostNet");
}

TEST(HelmChartTest, TlsFromValuesIsRenderedAndPlaintextIsExplicit) {
  REQUIRE_HELM();
  const std::string pem_cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const std::string pem_key = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
  std::vector<Object> objects =
      Render({"--set", "tls.existingSecret=", "--set-string", "tls.ca=" + pem_cert, "--set-string",
              "tls.cert=" + pem_cert, "--set-string", "tls.key=" + pem_key, "--set-string", "tls.caKey=" + pem_key});
  CheckRendering(objects, "");
  const Object* tls = Find(objects, "Secret", "bf-benchfleet-tls");
  ASSERT_NE(tls, nullptr);
  std::set<std::string> keys;
  for (const auto& kv : tls->node["data"]) keys.insert(kv.first.as<std::string>());
  EXPECT_THAT(keys, UnorderedElementsAre("ca.pem", "server.pem", "server-key.pem", "ca-key.pem"));
  std::vector<std::string> args =
      PodSpec(*Find(objects, "Deployment", "bf-benchfleet-coordinator"))["containers"][0]["args"].as<std::vector<std::string>>();
  EXPECT_THAT(args, ::testing::IsSupersetOf({"--tls-cert=/etc/benchfleet/tls/server.pem",
                                             "--tls-key=/etc/benchfleet/tls/server-key.pem",
                                             "--tls-client-ca=/etc/benchfleet/tls/ca.pem",
                                             "--ca-key=/etc/benchfleet/tls/ca-key.pem"}));
  EXPECT_THAT(args, ::testing::Not(::testing::Contains("--plaintext")));

  std::vector<Object> plain = Render({"--set", "tls.enabled=false"});
  CheckRendering(plain, "");
  args = PodSpec(*Find(plain, "Deployment", "bf-benchfleet-coordinator"))["containers"][0]["args"].as<std::vector<std::string>>();
  EXPECT_THAT(args, ::testing::IsSupersetOf({"--plaintext", "--insecure"}));
  EXPECT_THAT(args, ::testing::Not(::testing::Contains(::testing::StartsWith("--tls-"))));
  YAML::Node agent_yaml = YAML::Load(Find(plain, "ConfigMap", "bf-benchfleet-agent-nvidia")->node["data"]["agent.yaml"].as<std::string>());
  EXPECT_TRUE(agent_yaml["plaintext"].as<bool>());
  EXPECT_FALSE(agent_yaml["ca_cert"].IsDefined());
}

TEST(HelmChartTest, TheSchemaRefusesBadValues) {
  REQUIRE_HELM();
  struct Case {
    std::vector<std::string> args;
    std::string message;  // what helm must say
  };
  const std::vector<Case> cases = {
      {{"--set", "coordinator.replicas=two"}, "at '/coordinator/replicas': got string, want integer"},
      {{"--set", "coordinator.replicas=0"}, "/coordinator/replicas"},
      {{"--set", "coordinator.replicass=2"}, "additional properties 'replicass' not allowed"},
      {{"--set", "agents.daemonsets.nvidia.accelerator=tpu"}, "/agents/daemonsets/nvidia/accelerator"},
      {{"--set", "agents.daemonsets.cpu.gpus=2"}, "/agents/daemonsets/cpu/gpus"},
      {{"--set", "coordinator.grpcPort=70000"}, "/coordinator/grpcPort"},
      {{"--set", "database.existingSecret="}, "/database/existingSecret"},
      {{"--set", "tls.existingSecret="}, "/tls/ca"},
      {{"--set", "operatorToken.value=hunter2"}, "/operatorToken/value"},
      {{"--set", "podSecurityContext.runAsNonRoot=false"}, "/podSecurityContext/runAsNonRoot"},
      {{"--set", "agents.config.device_sampling=sometimes"}, "/agents/config/device_sampling"},
      {{"--set", "agents.config.renew_before=soon"}, "/agents/config/renew_before"},
      {{"--set", "agents.coordinatorAddresses={a:7443,b}"}, "/agents/coordinatorAddresses/1"},
  };
  for (const Case& c : cases) {
    CommandResult r = Template(c.args);
    EXPECT_NE(r.exit_code, 0) << absl::StrJoin(c.args, " ");
    EXPECT_THAT(r.err, HasSubstr("values don't meet the specifications of the schema")) << absl::StrJoin(c.args, " ");
    EXPECT_THAT(r.err, HasSubstr(c.message)) << absl::StrJoin(c.args, " ");
  }
}

TEST(HelmChartTest, NotesNameTheNextSteps) {
  REQUIRE_HELM();
  CommandResult r = RunCommand({FindHelm(), "install", "bf", ChartDir(), "--namespace", "benchfleet", "--dry-run=client"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NOTES:"));
  EXPECT_THAT(r.out, HasSubstr("benchfleet agents enroll --uses N"));
  EXPECT_THAT(r.out, HasSubstr("kubectl -n benchfleet get secret bf-benchfleet-operator-token -o jsonpath='{.data.token}'"));
  EXPECT_THAT(r.out, HasSubstr("kubectl -n benchfleet create secret generic benchfleet-tls --from-file=tls"));
  EXPECT_THAT(r.out, HasSubstr("Open Grafana"));
}

}  // namespace
}  // namespace benchfleet::testing
