// Tests of the ComfyUI backend against a fake ComfyUI: a fake HttpClient and fake websocket that
// model ComfyUI's classic execution cache (a node is served from cache when it and everything
// upstream equal the last prompt's), /free (optionally applied only after the next prompt, as
// the real server does), and answer with the real captures where a capture exists.
#include <deque>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/backends/comfyui/comfyui_backend.h"
#include "common/hashing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/agent/comfyui/comfyui_fixtures.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using Json = nlohmann::json;

// The real filesystem with a clock that moves only when the test (or the fake server) says so, or
// by what the backend sleeps.
class ClockEnv : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  Clock& clock() override { return clock_; }
  SimulatedClock clock_{{.sleeps_advance = true}};
};

class FakeComfyUi : public HttpClient {
 public:
  explicit FakeComfyUi(SimulatedClock* clock) : clock_(clock) {}

  absl::StatusOr<HttpResponse> Send(const HttpRequest& request, const ChunkCallback&) override {
    const std::string path = request.url.substr(request.url.find('/', 7));
    requests.push_back(request.method + " " + path);
    if (unreachable) return absl::UnavailableError(absl::StrCat(request.method, " ", request.url, ": Connection refused"));
    if (path == "/system_stats") return Answer(200, system_stats);
    if (path == "/free") {
      free_pending_ = true;
      if (!free_applies_late) ApplyFree();
      return Answer(200, "{}");
    }
    if (path == "/prompt") return Prompt(request.body);
    if (absl::StartsWith(path, "/history/")) {
      auto it = history_.find(path.substr(9));
      if (it == history_.end() || !history_ready) return Answer(200, "{}");
      return Answer(200, Json{{it->first, it->second}}.dump());
    }
    if (absl::StartsWith(path, "/view?")) {
      if (missing_images) return Answer(404, "");
      auto it = images_.find(path);
      if (it == images_.end()) return Answer(404, "");
      return Answer(200, it->second);
    }
    return Answer(404, "404: Not Found");
  }

  // Pops the next websocket message of the client.
  absl::StatusOr<std::string> NextMessage(const std::string& client, absl::Duration timeout) {
    std::deque<std::string>& queue = ws_[client];
    if (queue.empty()) {
      clock_->Advance(timeout);
      return absl::DeadlineExceededError("no message in time");
    }
    std::string m = queue.front();
    queue.pop_front();
    return m;
  }

  // Knobs.
  std::string system_stats = testing_fixture_stats();
  bool free_applies_late = false;  // ComfyUI applies /free when its queue moves on
  bool cache_enabled = true;
  bool report_cache = true;     // false: no execution_cached anywhere (a server that reports none)
  bool ws_skips_cached = false;  // the websocket joined late: execution_cached only in /history
  bool unreachable = false;
  bool missing_images = false;
  bool history_ready = true;
  bool never_finish = false;
  std::string reject_body;      // a 400 body for /prompt
  std::string prompt_answer;    // a 200 body for /prompt that is not ComfyUI's
  std::string error_node;       // execution_error at this node
  absl::Duration run_time = absl::Seconds(2);
  std::vector<std::string> requests;
  std::vector<Json> posted_graphs;

  static std::string testing_fixture_stats() { return comfyui::testing::CapturedBody("get_system_stats.json"); }

 private:
  static absl::StatusOr<HttpResponse> Answer(int status, std::string body) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
  }

  void ApplyFree() {
    last_signatures_.clear();
    free_pending_ = false;
  }

  // A node's cache key: its class, literal inputs, and the keys of what it links to.
  std::string Signature(const Json& graph, const std::string& id, std::map<std::string, std::string>* memo) {
    if (auto it = memo->find(id); it != memo->end()) return it->second;
    Json node = graph[id];
    for (auto& [name, value] : node["inputs"].items()) {
      if (value.is_array() && value.size() == 2 && value[0].is_string()) {
        value = Signature(graph, value[0].get<std::string>(), memo) + "#" + value[1].dump();
      }
    }
    return (*memo)[id] = node.dump();
  }

  absl::StatusOr<HttpResponse> Prompt(const std::string& body) {
    const Json json = Json::parse(body, nullptr, false);
    if (!reject_body.empty()) return Answer(400, reject_body);
    if (!prompt_answer.empty()) return Answer(200, prompt_answer);
    const Json& graph = json["prompt"];
    posted_graphs.push_back(graph);
    const std::string client = json["client_id"];
    const std::string id = absl::StrCat("p", ++number_);
    std::map<std::string, std::string> memo;
    std::set<std::string> signatures;
    std::vector<std::string> cached, executed;
    for (const auto& [node, unused] : graph.items()) {
      const std::string sig = Signature(graph, node, &memo);
      signatures.insert(sig);
      (cache_enabled && last_signatures_.contains(sig) ? cached : executed).push_back(node);
    }
    last_signatures_ = signatures;
    if (free_pending_) ApplyFree();  // the late /free: applied once the queue moved on
    const int64_t start_ms = 1795996575000 + number_ * 10000;
    std::deque<std::string>& q = ws_[client];
    auto push = [&](const std::string& type, Json data) {
      data["prompt_id"] = id;
      q.push_back(Json{{"type", type}, {"data", data}}.dump());
    };
    q.push_back(R"({"type": "status", "data": {"status": {"exec_info": {"queue_remaining": 1}}}})");
    push("execution_start", {{"timestamp", start_ms}});
    if (report_cache && !ws_skips_cached) push("execution_cached", {{"nodes", cached}, {"timestamp", start_ms}});
    Json status_messages = Json::array({Json::array({"execution_start", {{"prompt_id", id}, {"timestamp", start_ms}}})});
    if (report_cache) {
      status_messages.push_back(Json::array({"execution_cached", {{"prompt_id", id}, {"nodes", cached}}}));
    }
    for (const std::string& node : executed) {
      push("executing", {{"node", node}});
      push("progress", {{"node", node}, {"value", 1}, {"max", 1}});
      if (node == error_node) {
        Json error = {{"node_id", node}, {"node_type", graph[node]["class_type"]}, {"executed", Json::array()},
                      {"exception_message", "boom\n"}, {"exception_type", "RuntimeError"}, {"timestamp", start_ms + 5}};
        push("execution_error", error);
        error["prompt_id"] = id;
        status_messages.push_back(Json::array({"execution_error", error}));
        history_[id] = {{"status", {{"status_str", "error"}, {"completed", false}, {"messages", status_messages}}},
                        {"outputs", Json::object()}};
        clock_->Advance(run_time);
        return Answer(200, Json{{"prompt_id", id}, {"number", number_}, {"node_errors", Json::object()}}.dump());
      }
    }
    // The image depends on the seed of node 2 only (as ImageAddNoise's output does).
    const std::string filename = absl::StrCat("heldout_", number_, "_.png");
    images_[absl::StrCat("/view?filename=", filename, "&subfolder=&type=output")] =
        absl::StrCat("PNG image of seed ", graph["2"]["inputs"]["seed"].dump());
    Json image = {{"filename", filename}, {"subfolder", ""}, {"type", "output"}};
    push("executed", {{"node", "4"}, {"output", {{"images", Json::array({image})}}}});
    const int64_t end_ms = start_ms + (executed.empty() ? 0 : 1500);
    if (!never_finish) push("execution_success", {{"timestamp", end_ms}});
    status_messages.push_back(Json::array({"execution_success", {{"prompt_id", id}, {"timestamp", end_ms}}}));
    if (!never_finish) {
      history_[id] = {{"status", {{"status_str", "success"}, {"completed", true}, {"messages", status_messages}}},
                      {"outputs", {{"4", {{"images", Json::array({image})}}}}}};
    }
    clock_->Advance(executed.empty() ? absl::Milliseconds(2) : run_time);
    return Answer(200, Json{{"prompt_id", id}, {"number", number_}, {"node_errors", Json::object()}}.dump());
  }

  SimulatedClock* clock_;
  int number_ = 0;
  bool free_pending_ = false;
  std::set<std::string> last_signatures_;
  std::map<std::string, std::deque<std::string>> ws_;
  std::map<std::string, Json> history_;
  std::map<std::string, std::string> images_;
};

class FakeWebSocket : public WebSocketConnection {
 public:
  FakeWebSocket(FakeComfyUi* server, std::string client) : server_(server), client_(std::move(client)) {}
  absl::StatusOr<std::string> ReceiveText(absl::Duration timeout) override {
    return server_->NextMessage(client_, timeout);
  }
  absl::Status SendText(std::string_view) override { return absl::OkStatus(); }
  void Close() override {}

 private:
  FakeComfyUi* server_;
  std::string client_;
};

std::string CapturedWorkflow() {
  return comfyui::testing::Capture("post_prompt_ok_run1_first.json")["request"]["body"]["prompt"].dump(2);
}

class ComfyUiBackendTest : public ::testing::Test {
 protected:
  ComfyUiBackendTest() : server_(&env_.clock_) {
    workflow_path_ = dir_.path() + "/heldout.workflow.json";
    EXPECT_TRUE(env_.WriteFileAtomically(workflow_path_, CapturedWorkflow()).ok());
    AllowConfig allow;
    allow.backends = {"comfyui"};
    allow.urls = {"http://127.0.0.1:8188"};
    allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
  }

  std::unique_ptr<Backend> Make(const std::string& extra, bool websocket = true, const std::string& more_set = "") {
    return MakeSection(absl::StrCat("set: {seed: {node: \"2\", input: seed}", more_set, "}\n", extra), websocket);
  }

  // A section of the url, the workflow and `rest` (no `set` unless rest has one).
  std::unique_ptr<Backend> MakeSection(const std::string& rest, bool websocket = true) {
    const YAML::Node section =
        YAML::Load(absl::StrCat("url: http://127.0.0.1:8188/\nworkflow: ", workflow_path_, "\n", rest));
    BackendContext context;
    context.env = &env_;
    context.allow = allow_.get();
    context.work_dir = dir_.path() + "/series";
    ComfyUiDependencies deps;
    context.services.http = &server_;
    deps.new_client_id = [this] { return absl::StrCat("client", ++clients_); };
    deps.connect_websocket = [this, websocket](const std::string& url, absl::Duration)
        -> absl::StatusOr<std::unique_ptr<WebSocketConnection>> {
      ws_urls_.push_back(url);
      if (!websocket) return absl::UnavailableError("websocket " + url + ": cannot connect: Connection refused");
      return std::unique_ptr<WebSocketConnection>(new FakeWebSocket(&server_, url.substr(url.find('=') + 1)));
    };
    deps.on_progress = [this](const ComfyUiProgress& p) { progress_.push_back(absl::StrCat(p.node, ":", p.value, "/", p.max)); };
    absl::StatusOr<std::unique_ptr<Backend>> backend = NewComfyUiBackendWith(section, context, deps);
    EXPECT_TRUE(backend.ok()) << backend.status();
    return backend.ok() ? std::move(*backend) : nullptr;
  }

  std::unique_ptr<BackendSession> Open(Backend& backend) {
    std::string log_tail;
    absl::StatusOr<std::unique_ptr<BackendSession>> session = backend.Open({}, &log_tail);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }

  static v1::RunRecord Run(BackendSession& session, v1::Phase phase, uint32_t call, uint32_t input_index = 0) {
    v1::RunRecord record;
    RunInput input;
    input.phase = phase;
    input.call_index = call;
    input.repetition = 1;
    input.input_index = input_index;
    session.Run(input, &record);
    return record;
  }

  static std::string Flags(const v1::RunRecord& r) {
    std::string out;
    for (const v1::Flag& f : r.flags()) absl::StrAppend(&out, f.code(), ": ", f.reason(), "\n");
    return out;
  }

  ::benchfleet::agent::testing::ScopedTempDir dir_;
  ClockEnv env_;
  FakeComfyUi server_;
  std::unique_ptr<AllowList> allow_;
  std::string workflow_path_;
  int clients_ = 0;
  std::vector<std::string> ws_urls_;
  std::vector<std::string> progress_;
};

TEST_F(ComfyUiBackendTest, SeriesCyclesThroughTheSeeds) {
  std::unique_ptr<Backend> backend = Make("seeds: [42, 43, 44]\n");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->name(), "comfyui");
  ASSERT_NE(MainFigure(backend->figures()), nullptr);
  EXPECT_EQ(MainFigure(backend->figures())->name, "images_per_second");
  // Validation on its own session, one run per seed.
  std::unique_ptr<BackendSession> validation = Open(*backend);
  EXPECT_EQ(validation->info().backend_version, "0.3.64");
  EXPECT_FALSE(validation->info().simulated);
  std::vector<std::string> seeds;
  for (uint32_t i = 0; i < 3; ++i) {
    v1::RunRecord r = Run(*validation, v1::PHASE_VALIDATION, i + 1, i);
    ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message();
    seeds.push_back(r.params().at("set.seed"));
  }
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  ASSERT_EQ(cold.status().code(), v1::RunStatus::CODE_OK) << cold.status().message();
  seeds.push_back(cold.params().at("set.seed"));
  EXPECT_EQ(Flags(cold), "");
  EXPECT_EQ(cold.params().at("cached_nodes"), "");
  EXPECT_EQ(cold.params().at("executed_nodes"), "1,2,3,4,5");
  std::vector<v1::RunRecord> warm;
  for (uint32_t k = 1; k <= 4; ++k) {
    warm.push_back(Run(*session, v1::PHASE_WARM, k));
    ASSERT_EQ(warm.back().status().code(), v1::RunStatus::CODE_OK) << warm.back().status().message();
    seeds.push_back(warm.back().params().at("set.seed"));
    EXPECT_EQ(Flags(warm.back()), "") << k;
    // Only EmptyImage, which no per-run value reaches, came from the cache.
    EXPECT_EQ(warm.back().params().at("cached_nodes"), "1");
  }
  EXPECT_THAT(seeds, ::testing::ElementsAre("42", "43", "44", "42", "43", "44", "42", "43"));

  // The cold run started with /free; every run fetched its image.
  EXPECT_THAT(server_.requests, ::testing::Contains("POST /free"));
  EXPECT_EQ(std::count(server_.requests.begin(), server_.requests.end(), "POST /free"), 1);
  ASSERT_EQ(cold.outputs_size(), 1);
  EXPECT_EQ(cold.outputs(0).kind(), "image");
  EXPECT_EQ(cold.outputs(0).name(), "heldout_4_.png");
  EXPECT_EQ(cold.outputs(0).sha256(), Sha256Hex("PNG image of seed 42"));
  EXPECT_EQ(cold.outputs(0).size_bytes(), std::string("PNG image of seed 42").size());
  EXPECT_EQ(ws_urls_[0], "ws://127.0.0.1:8188/ws?clientId=client1");
  EXPECT_EQ(cold.params().at("progress_source"), "websocket");
  EXPECT_EQ(cold.params().at("comfyui_version"), "0.3.64");
  EXPECT_EQ(cold.params().at("pytorch_version"), "1.13.0a0");
  EXPECT_EQ(cold.params().at("devices"), "cpu (cpu, vram_total 25276059648 B)");
  EXPECT_EQ(cold.params().at("workflow_sha256"), Sha256Hex(CapturedWorkflow()));
  EXPECT_EQ(absl::ToInt64Milliseconds(absl::Seconds(cold.wall_duration().seconds()) +
                                      absl::Nanoseconds(cold.wall_duration().nanos())),
            2000);
  std::map<std::string, double> metrics;
  for (const v1::Metric& m : cold.metrics()) metrics[m.name()] = m.value();
  EXPECT_EQ(metrics.at("server_execution_seconds"), 1.5);
  EXPECT_EQ(metrics.at("images"), 1);
  EXPECT_EQ(metrics.at("images_per_second"), 0.5);
  EXPECT_EQ(metrics.at("cached_nodes"), 0);
  EXPECT_EQ(metrics.at("executed_nodes"), 5);
  // Device memory before and after, labelled as RAM on a CPU device.
  ASSERT_EQ(cold.memory_size(), 4);
  EXPECT_EQ(cold.memory(0).kind(), v1::MEMORY_KIND_DEVICE_USED);
  EXPECT_EQ(cold.memory(0).scope(), "cpu vram_total-vram_free before run");
  EXPECT_EQ(cold.memory(0).bytes(), 25276059648u - 23374323712u);
  EXPECT_EQ(cold.memory(0).source(), "comfyui /system_stats (cpu device: system RAM, not VRAM)");
  EXPECT_EQ(cold.memory(3).scope(), "cpu torch_vram_total-torch_vram_free after run");
  EXPECT_THAT(progress_, ::testing::Contains("2:1/1"));
  // The workflow, verbatim, in the series folder.
  EXPECT_EQ(*env_.ReadFile(dir_.path() + "/series/comfyui-workflow.json"), CapturedWorkflow());
}

TEST_F(ComfyUiBackendTest, WarmRunOfTheSameSeedIsACacheHit) {
  std::unique_ptr<Backend> backend = Make("seeds: [42]\n");
  std::unique_ptr<BackendSession> session = Open(*backend);
  EXPECT_EQ(Flags(Run(*session, v1::PHASE_COLD, 1)), "");
  v1::RunRecord warm = Run(*session, v1::PHASE_WARM, 1);
  ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK);
  EXPECT_EQ(warm.params().at("cached_nodes"), "1,2,3,4,5");
  EXPECT_EQ(warm.params().at("executed_nodes"), "");
  EXPECT_EQ(warm.params().at("cache_report"), "execution_cached");
  EXPECT_EQ(Flags(warm),
            "CACHE_HIT: ComfyUI executed no node: execution_cached lists every node of the run, 1 (EmptyImage), 2 "
            "(ImageAddNoise), 3 (ImageScale), 4 (SaveImage), 5 (ImageScale): nothing was measured\n");
}

// The size is set by the spec but stays the same from run to run: EmptyImage, which depends on it
// only, may come from the cache (as a text encoder would in txt2img); the seeded nodes may not.
TEST_F(ComfyUiBackendTest, NodesOfValuesConstantAcrossRunsMayBeCached) {
  std::unique_ptr<Backend> backend =
      Make("seeds: [42, 43]\nwidth: 512\nheight: 512\n", true,
           ", width: {node: \"1\", input: width}, height: {node: \"1\", input: height}");
  std::unique_ptr<BackendSession> session = Open(*backend);
  ASSERT_EQ(Run(*session, v1::PHASE_COLD, 1).status().code(), v1::RunStatus::CODE_OK);
  v1::RunRecord warm1 = Run(*session, v1::PHASE_WARM, 1);
  EXPECT_EQ(warm1.params().at("set.width"), "512");
  EXPECT_EQ(warm1.params().at("cached_nodes"), "1");
  EXPECT_EQ(Flags(warm1), "");
  v1::RunRecord warm2 = Run(*session, v1::PHASE_WARM, 2);  // seeds[2 % 2]: 42 again, after 43
  EXPECT_EQ(warm2.params().at("set.seed"), "42");
  EXPECT_EQ(Flags(warm2), "");
}

TEST_F(ComfyUiBackendTest, DistinctRunsGiveEveryRunAFreshSeed) {
  std::unique_ptr<Backend> backend = Make("seeds: [42]\ndistinct_runs: true\n");
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  v1::RunRecord warm1 = Run(*session, v1::PHASE_WARM, 1);
  v1::RunRecord warm2 = Run(*session, v1::PHASE_WARM, 2);
  EXPECT_EQ(cold.params().at("set.seed"), "1000045");
  EXPECT_EQ(warm1.params().at("set.seed"), "2000048");
  EXPECT_EQ(warm2.params().at("set.seed"), "3000051");
  EXPECT_EQ(Flags(warm1) + Flags(warm2), "");
  EXPECT_EQ(cold.params().at("distinct_runs"), "true");
}

TEST_F(ComfyUiBackendTest, ColdRunServedFromCacheAfterALateFree) {
  server_.free_applies_late = true;
  std::unique_ptr<Backend> backend = Make("seeds: [42]\n");
  std::unique_ptr<BackendSession> validation = Open(*backend);
  ASSERT_EQ(Run(*validation, v1::PHASE_VALIDATION, 1, 0).status().code(), v1::RunStatus::CODE_OK);
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  ASSERT_EQ(cold.status().code(), v1::RunStatus::CODE_OK);
  EXPECT_EQ(Flags(cold),
            "CACHE_HIT: cold run: execution_cached lists 5 node(s) after POST /free, 1 (EmptyImage), 2 (ImageAddNoise), "
            "3 (ImageScale), 4 (SaveImage), 5 (ImageScale): a cold state could not be established\n");
}

// The bug on a server started with --cache-none: a small graph's runs (20 ms, the same image
// each time) were all flagged "served from a cache" although ComfyUI reported nothing cached.
// Its report decides: none of them is a cache hit.
TEST_F(ComfyUiBackendTest, FastRunsWithNothingCachedAreNeverCacheHits) {
  server_.cache_enabled = false;  // execution_cached {"nodes": []} for every prompt, as --cache-none sends
  server_.run_time = absl::Milliseconds(20);
  std::unique_ptr<Backend> backend = Make("seeds: [42]\ncache_hit_threshold: 50ms\n");
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  EXPECT_EQ(Flags(cold), "");
  for (uint32_t k = 1; k <= 3; ++k) {
    v1::RunRecord warm = Run(*session, v1::PHASE_WARM, k);
    ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK);
    EXPECT_EQ(warm.outputs(0).sha256(), cold.outputs(0).sha256());
    EXPECT_EQ(warm.params().at("cached_nodes"), "");
    EXPECT_EQ(warm.params().at("cache_report"), "execution_cached");
    EXPECT_EQ(Flags(warm), "") << k;
  }
}

// Without any execution_cached report, timing is all there is: the flag says it was inferred.
TEST_F(ComfyUiBackendTest, WithoutAReportTheTimingRuleSaysItInferred) {
  server_.cache_enabled = false;
  server_.report_cache = false;
  server_.run_time = absl::Milliseconds(20);
  std::unique_ptr<Backend> backend = Make("seeds: [42]\ncache_hit_threshold: 50ms\n");
  std::unique_ptr<BackendSession> validation = Open(*backend);
  EXPECT_EQ(Flags(Run(*validation, v1::PHASE_VALIDATION, 1, 0)), "");
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  EXPECT_EQ(cold.params().at("cache_report"), "missing");
  EXPECT_EQ(Flags(cold),
            "CACHE_HIT: cold run: ComfyUI reported no execution_cached message, so a cold state cannot be confirmed\n");
  EXPECT_EQ(Flags(Run(*session, v1::PHASE_WARM, 1)),
            "CACHE_HIT: served from a cache, inferred from timing: ComfyUI reported no execution_cached message, and "
            "the images equal an earlier run's of the same inputs while the run took 20ms (under cache_hit_threshold "
            "50ms)\n");
  server_.run_time = absl::Milliseconds(80);
  EXPECT_EQ(Flags(Run(*session, v1::PHASE_WARM, 2)), "");
}

// The bug of a spec without a `set` section: the report was never used, and a warm run with every
// node cached was published OK. Every warm run repeats the cold run's graph here.
TEST_F(ComfyUiBackendTest, WithoutASetSectionTheReportStillDecides) {
  std::unique_ptr<Backend> backend = MakeSection("");
  ASSERT_NE(backend, nullptr);
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  ASSERT_EQ(cold.status().code(), v1::RunStatus::CODE_OK) << cold.status().message();
  EXPECT_EQ(Flags(cold), "");
  EXPECT_EQ(cold.params().count("set.seed"), 0u);
  for (uint32_t k = 1; k <= 2; ++k) {
    v1::RunRecord warm = Run(*session, v1::PHASE_WARM, k);
    ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK);
    EXPECT_EQ(Flags(warm),
              "CACHE_HIT: ComfyUI executed no node: execution_cached lists every node of the run, 1 (EmptyImage), 2 "
              "(ImageAddNoise), 3 (ImageScale), 4 (SaveImage), 5 (ImageScale): nothing was measured\n")
        << k;
  }
}

// A per-run value that reaches SaveImage's filename_prefix only: ComfyUI re-runs node 4 alone and
// takes the noise and the scaling from its cache.
TEST_F(ComfyUiBackendTest, PrefixOnlyChangeIsACacheHitNamingTheNodes) {
  std::unique_ptr<Backend> backend = MakeSection("set: {seed: {node: \"4\", input: filename_prefix}}\nseeds: [7, 8]\n");
  ASSERT_NE(backend, nullptr);
  std::unique_ptr<BackendSession> session = Open(*backend);
  EXPECT_EQ(Flags(Run(*session, v1::PHASE_COLD, 1)), "");
  v1::RunRecord warm = Run(*session, v1::PHASE_WARM, 1);
  ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK);
  EXPECT_EQ(warm.params().at("set.seed"), "8");
  EXPECT_EQ(warm.params().at("cached_nodes"), "1,2,3,5");
  EXPECT_EQ(warm.params().at("executed_nodes"), "4");
  EXPECT_EQ(Flags(warm),
            "CACHE_HIT: only output node(s) 4 (SaveImage) executed; execution_cached lists the work upstream of them, 1 "
            "(EmptyImage), 2 (ImageAddNoise), 3 (ImageScale), 5 (ImageScale): the work being measured was skipped\n");
}

// A websocket that missed execution_cached (it joined late): /history's report decides, with
// history's list of the executed nodes.
TEST_F(ComfyUiBackendTest, AReportMissedOnTheWebsocketComesFromHistory) {
  server_.ws_skips_cached = true;
  server_.run_time = absl::Milliseconds(1);
  std::unique_ptr<Backend> backend = Make("seeds: [42, 43]\n");
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  EXPECT_EQ(cold.params().at("cache_report"), "execution_cached");
  EXPECT_EQ(Flags(cold), "");
  v1::RunRecord warm = Run(*session, v1::PHASE_WARM, 1);  // seed 43: only node 1 cached
  EXPECT_EQ(warm.params().at("cached_nodes"), "1");
  EXPECT_EQ(warm.params().at("executed_nodes"), "2,3,4,5");
  EXPECT_EQ(Flags(warm), "");
  EXPECT_THAT(server_.requests, ::testing::Contains("GET /history/p2"));
}

// What /system_stats says the server runs on is in the series' conditions (and fingerprint).
TEST_F(ComfyUiBackendTest, SystemStatsGoToTheConditions) {
  std::unique_ptr<Backend> backend = Make("seeds: [42]\n");
  std::unique_ptr<BackendSession> cpu = Open(*backend);
  EXPECT_THAT(cpu->info().conditions,
              ::testing::ElementsAre(::testing::Pair("comfyui_version", "0.3.64"), ::testing::Pair("devices", "cpu (cpu)"),
                                     ::testing::Pair("python_version", "3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]"),
                                     ::testing::Pair("pytorch_version", "1.13.0a0")));
  // The params keep them too.
  EXPECT_EQ(cpu->info().params.at("pytorch_version"), "1.13.0a0");
  EXPECT_EQ(cpu->info().params.at("devices"), "cpu (cpu, vram_total 25276059648 B)");
  // A GPU server: written from ComfyUI's source (server.py system_stats: the device name is
  // comfy.model_management.get_torch_device_name, "cuda:0 NAME : cudaMallocAsync"), not captured.
  server_.system_stats = R"({"system": {"os": "posix", "comfyui_version": "0.3.64", "python_version": "3.12.3",
      "pytorch_version": "2.5.1+cu124"}, "devices": [{"name": "cuda:0 NVIDIA H200 : cudaMallocAsync", "type": "cuda",
      "index": 0, "vram_total": 150754820096, "vram_free": 150000000000, "torch_vram_total": 0, "torch_vram_free": 0},
      {"name": "cuda:1 NVIDIA H200 : cudaMallocAsync", "type": "cuda", "index": 1, "vram_total": 150754820096,
      "vram_free": 1, "torch_vram_total": 0, "torch_vram_free": 0}]})";
  std::unique_ptr<BackendSession> gpu = Open(*backend);
  EXPECT_EQ(gpu->info().conditions.at("devices"),
            "cuda:0 NVIDIA H200 : cudaMallocAsync (cuda); cuda:1 NVIDIA H200 : cudaMallocAsync (cuda)");
  EXPECT_EQ(gpu->info().conditions.at("pytorch_version"), "2.5.1+cu124");
  EXPECT_EQ(gpu->info().conditions.at("python_version"), "3.12.3");
  // A server that leaves a field out: the key is absent, not empty.
  server_.system_stats = R"({"system": {"comfyui_version": "0.3.10"}, "devices": []})";
  std::unique_ptr<BackendSession> bare = Open(*backend);
  EXPECT_THAT(bare->info().conditions, ::testing::ElementsAre(::testing::Pair("comfyui_version", "0.3.10")));
}

TEST_F(ComfyUiBackendTest, FallsBackToHistoryPollingWithoutWebsocket) {
  std::unique_ptr<Backend> backend = Make("seeds: [42, 43]\n", /*websocket=*/false);
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  ASSERT_EQ(cold.status().code(), v1::RunStatus::CODE_OK) << cold.status().message();
  EXPECT_EQ(cold.params().at("progress_source"),
            "history polling (websocket: websocket ws://127.0.0.1:8188/ws?clientId=client1: cannot connect: "
            "Connection refused)");
  EXPECT_EQ(cold.params().at("executed_nodes"), "1,2,3,4,5");
  EXPECT_EQ(cold.outputs(0).sha256(), Sha256Hex("PNG image of seed 42"));
  EXPECT_THAT(server_.requests, ::testing::Contains("GET /history/p1"));
}

TEST_F(ComfyUiBackendTest, HistoryPollingHasADeadline) {
  server_.history_ready = false;
  std::unique_ptr<Backend> backend = Make("seeds: [42]\nrun_timeout: 10s\n", /*websocket=*/false);
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  EXPECT_EQ(cold.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(cold.status().message(), "ComfyUI did not finish prompt p1 within run_timeout 10s");
}

TEST_F(ComfyUiBackendTest, WebsocketWaitHasADeadline) {
  server_.never_finish = true;
  std::unique_ptr<Backend> backend = Make("seeds: [42]\nrun_timeout: 10s\n");
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord cold = Run(*session, v1::PHASE_COLD, 1);
  EXPECT_EQ(cold.status().message(), "ComfyUI did not finish prompt p1 within run_timeout 10s");
  EXPECT_EQ(server_.requests.back(), "POST /interrupt");
}

TEST_F(ComfyUiBackendTest, RejectedWorkflowFailsTheSeries) {
  server_.reject_body = comfyui::testing::CapturedBody("post_prompt_invalid_multiple_input_errors.json");
  std::unique_ptr<Backend> backend = Make("seeds: [42]\n");
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord r = Run(*session, v1::PHASE_VALIDATION, 1, 0);
  EXPECT_EQ(r.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_TRUE(absl::StartsWith(r.status().message(),
                               "ComfyUI rejected the workflow: Prompt outputs failed validation; node 3 (KSampler) "
                               "input steps: Value 0 smaller than min of 1 (steps); "))
      << r.status().message();
  EXPECT_FALSE(session->alive());
  std::string log_tail;
  EXPECT_EQ(backend->Open({}, &log_tail).status().message(), r.status().message());
}

TEST_F(ComfyUiBackendTest, ExecutionErrorFailsTheRun) {
  server_.error_node = "2";
  std::unique_ptr<Backend> backend = Make("seeds: [42]\n");
  std::unique_ptr<BackendSession> session = Open(*backend);
  v1::RunRecord r = Run(*session, v1::PHASE_COLD, 1);
  EXPECT_EQ(r.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(r.status().message(), "ComfyUI run failed: node 2 (ImageAddNoise) raised RuntimeError: boom");
  EXPECT_EQ(r.params().at("executed_nodes"), "1,2");
  EXPECT_TRUE(session->alive());
}

TEST_F(ComfyUiBackendTest, UnreachableNonJsonAndMissingImage) {
  std::unique_ptr<Backend> backend = Make("seeds: [42]\n");
  std::unique_ptr<BackendSession> session = Open(*backend);
  server_.missing_images = true;
  v1::RunRecord missing = Run(*session, v1::PHASE_COLD, 1);
  EXPECT_EQ(missing.status().message(),
            "output image heldout_1_.png of node 4 is missing: GET /view?filename=heldout_1_.png&subfolder=&type=output "
            "answered 404 with an empty body");
  server_.missing_images = false;
  server_.prompt_answer = "<html>oops</html>";
  EXPECT_EQ(Run(*session, v1::PHASE_WARM, 1).status().message(),
            "POST /prompt answered 200 with a body that is not JSON: <html>oops</html>");
  server_.unreachable = true;
  EXPECT_EQ(Run(*session, v1::PHASE_WARM, 2).status().message(),
            "ComfyUI is unreachable (POST /prompt): POST http://127.0.0.1:8188/prompt: Connection refused");
  EXPECT_FALSE(session->alive());
}

TEST_F(ComfyUiBackendTest, OpenFailsWhenUnreachableAndMarksTheSimulator) {
  std::unique_ptr<Backend> backend = Make("seeds: [42]\n");
  server_.unreachable = true;
  std::string log_tail;
  EXPECT_EQ(backend->Open({}, &log_tail).status(),
            absl::UnavailableError("ComfyUI at http://127.0.0.1:8188 is unreachable: GET "
                                   "http://127.0.0.1:8188/system_stats: Connection refused"));
  server_.unreachable = false;
  server_.system_stats = R"({"system": {"comfyui_version": "0.3.64-SIMULATED"}, "devices": []})";
  std::unique_ptr<BackendSession> session = Open(*backend);
  EXPECT_TRUE(session->info().simulated);
}

TEST_F(ComfyUiBackendTest, MatrixAxes) {
  std::unique_ptr<Backend> backend = Make("seeds: [42]\n");
  EXPECT_THAT(backend->matrix_axes(), ::testing::ElementsAre("steps", "width", "height"));
  EXPECT_EQ(backend->CheckCombination({{"steps", "20"}}),
            absl::InvalidArgumentError("matrix axis steps needs comfyui.set.steps: the workflow input it goes to"));
}

}  // namespace
}  // namespace benchfleet::agent
