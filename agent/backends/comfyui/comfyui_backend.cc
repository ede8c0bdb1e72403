#include "agent/backends/comfyui/comfyui_backend.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/backends/comfyui/cache_trap.h"
#include "agent/backends/comfyui/comfyui_config.h"
#include "agent/backends/comfyui/comfyui_protocol.h"
#include "agent/backends/comfyui/figures.h"
#include "agent/http/http_client.h"
#include "agent/process/child_process.h"
#include "common/string_views.h"
#include "common/hashing.h"
#include "common/output_determinism.h"
#include "common/proto_time.h"
#include "nlohmann/json.hpp"

namespace benchfleet::agent {
namespace {

using comfyui::ComfyUiConfig;
using comfyui::Execution;
using comfyui::SystemStats;

constexpr char kBackendName[] = "comfyui";
constexpr char kStatsSource[] = "comfyui /system_stats";
constexpr absl::Duration kConnectTimeout = absl::Seconds(5);
// The file in the series folder that holds the workflow, verbatim.
constexpr char kWorkflowCopy[] = "comfyui-workflow.json";
// distinct_runs: the step between the fresh seeds of two runs (a prime, so the fresh seeds of
// one run do not land on another listed seed by accident for small lists).
constexpr uint64_t kDistinctSeedStep = 1000003;

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

std::string RandomClientId() {
  std::random_device random;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 32; ++i) id.push_back(kHex[random() & 15]);
  return id;
}

// What the backend and its sessions share (a session may outlive the backend).
struct Shared {
  ComfyUiConfig config;
  BackendContext context;
  ComfyUiDependencies deps;
  HttpClient* http = nullptr;  // the agent's (BackendContext::services)
  comfyui::OutputHistory outputs;  // over the whole series: references of validation included
  uint64_t runs_made = 0;          // for distinct_runs' fresh seeds
  // Set when ComfyUI rejected the workflow (400): every later Open fails with it.
  absl::Status rejected = absl::OkStatus();
};

// The values of one run: name -> JSON literal, and the seed used.
struct RunValues {
  std::map<std::string, std::string> literals;
  std::optional<uint64_t> seed;
};

class ComfyUiSession : public BackendSession {
 public:
  ComfyUiSession(std::shared_ptr<Shared> shared, Combination combination, SessionInfo info, SystemStats stats)
      : s_(std::move(shared)), combination_(std::move(combination)), info_(std::move(info)), stats_(std::move(stats)) {}
  ~ComfyUiSession() override { (void)Close(); }

  const SessionInfo& info() const override { return info_; }
  bool alive() const override { return alive_; }
  absl::Status Close() override {
    alive_ = false;
    return absl::OkStatus();
  }

  void Run(const RunInput& input, v1::RunRecord* record) override {
    const ComfyUiConfig& config = s_->config;
    Clock& clock = s_->context.env->clock();
    record->set_backend(kBackendName);
    record->set_mode("external");
    auto& params = *record->mutable_params();
    for (const auto& [key, value] : info_.params) params[key] = value;
    const absl::Time now = clock.Now();
    SetTimestamp(now, record->mutable_start_time());
    SetTimestamp(now, record->mutable_end_time());
    if (!alive_) return Fail(record, absl::StrCat("the ComfyUI session cannot run: ", dead_reason_));

    const RunValues values = ValuesFor(input);
    for (const auto& [name, literal] : values.literals) params[absl::StrCat("set.", name)] = literal;
    absl::StatusOr<std::string> graph = config.graph.Substitute(config.set, values.literals);
    if (!graph.ok()) return Fail(record, absl::StrCat("setting the run's values in the workflow: ", graph.status().message()));
    const std::string graph_sha256 = Sha256Hex(*graph);
    params["graph_sha256"] = graph_sha256;
    // The graph with the run's values substituted (its seed among them) decides the images: the
    // same graph should give the same images (common/output_determinism.h).
    params[std::string(kInputsSha256Param)] = graph_sha256;

    if (input.phase == v1::PHASE_COLD) {
      // /free unloads the models and empties the execution cache, but ComfyUI applies it only
      // when its queue moves on: the run's execution_cached tells whether it took effect.
      absl::StatusOr<HttpResponse> freed =
          Request("POST", "/free", R"({"unload_models": true, "free_memory": true})", config.request_timeout);
      if (!freed.ok()) return FailUnreachable(record, "POST /free", freed.status());
      if (freed->status != 200) {
        return Fail(record, absl::StrCat("POST /free answered ", freed->status, ": ", QuoteBody(freed->body)));
      }
      // A cooldown before the timed part: a stop (SIGTERM, a cancel) ends it, and the run is not made.
      if (clock.WaitForStop(s_->context.stop, config.free_settle)) {
        return Fail(record, absl::StrCat("stopped (the agent's stop or the task's cancel) during free_settle (",
                                         absl::FormatDuration(config.free_settle), ") after POST /free: not measured"));
      }
      params["free_settle_seconds"] = absl::StrCat(absl::ToDoubleSeconds(config.free_settle));
    }

    std::vector<v1::MemoryFigure> memory;
    SampleDevices("before run", &memory);
    // The server's peak memory from here on is this run's, where the platform lets us reset it.
    bool peak_reset = false;
    if (config.pid.has_value()) {
      if (absl::Status reset = ResetPeakRss(s_->context.env, *config.pid); reset.ok()) {
        peak_reset = true;
      } else {
        params["memory_peak_reset_error"] = std::string(reset.message());
      }
    }

    const std::string client_id = s_->deps.new_client_id ? s_->deps.new_client_id() : RandomClientId();
    std::unique_ptr<WebSocketConnection> ws;
    std::string ws_url = absl::StrCat("ws://", config.url.substr(7), "/ws?clientId=", client_id);
    auto connected = s_->deps.connect_websocket ? s_->deps.connect_websocket(ws_url, kConnectTimeout)
                                                : ConnectWebSocket(ws_url, kConnectTimeout);
    if (connected.ok()) {
      ws = std::move(*connected);
      params["progress_source"] = "websocket";
    } else {
      params["progress_source"] = absl::StrCat("history polling (websocket: ", connected.status().message(), ")");
    }

    const std::string body = absl::StrCat(R"({"prompt":)", *graph, R"(,"client_id":")", client_id, "\"}");
    const absl::Time start_time = clock.Now();
    const absl::Duration started = clock.Monotonic();
    absl::StatusOr<HttpResponse> posted = Request("POST", "/prompt", body, config.request_timeout);
    if (!posted.ok()) return FailUnreachable(record, "POST /prompt", posted.status());
    absl::StatusOr<std::string> prompt_id = comfyui::ParsePromptAnswer(posted->status, posted->body);
    if (!prompt_id.ok()) {
      if (prompt_id.status().code() == absl::StatusCode::kInvalidArgument) {
        // The graph is wrong: no run of this series can succeed.
        s_->rejected = prompt_id.status();
        alive_ = false;
        dead_reason_ = std::string(prompt_id.status().message());
      }
      return Fail(record, std::string(prompt_id.status().message()));
    }
    params["prompt_id"] = *prompt_id;

    absl::Duration finished = clock.Monotonic();
    absl::StatusOr<Execution> execution = Follow(*prompt_id, ws.get(), started, &params, &finished);
    const absl::Duration wall = finished - started;
    if (ws != nullptr) ws->Close();
    SetTimestamp(start_time, record->mutable_start_time());
    SetTimestamp(clock.Now(), record->mutable_end_time());
    SetDuration(wall, record->mutable_wall_duration());
    if (!execution.ok()) {
      if (execution.status().code() == absl::StatusCode::kDeadlineExceeded) {
        // Best effort: stop the prompt so that it does not delay the runs after this one.
        (void)Request("POST", "/interrupt", "{}", config.request_timeout);
      }
      if (execution.status().code() == absl::StatusCode::kUnavailable) {
        alive_ = false;
        dead_reason_ = absl::StrCat("an earlier run failed: ", execution.status().message());
      }
      return Fail(record, std::string(execution.status().message()));
    }
    params["cached_nodes"] = absl::StrJoin(execution->cached, ",");
    params["executed_nodes"] = absl::StrJoin(execution->executed, ",");
    AddMetric(record, "cached_nodes", execution->cached.size(), "nodes");
    AddMetric(record, "executed_nodes", execution->executed.size(), "nodes");
    if (execution->start_ms.has_value() && execution->end_ms.has_value()) {
      AddMetric(record, "server_execution_seconds", double(*execution->end_ms - *execution->start_ms) / 1000.0, "s");
    }
    if (!execution->success) {
      return Fail(record, absl::StrCat("ComfyUI run failed: ", execution->ErrorText()));
    }
    if (execution->images.empty()) {
      return Fail(record, "ComfyUI finished the run without any output image (the workflow needs a SaveImage or "
                          "PreviewImage node)");
    }

    std::vector<std::string> hashes;
    for (const comfyui::ImageRef& image : execution->images) {
      const std::string path = absl::StrCat("/view?filename=", UrlEncode(image.filename), "&subfolder=",
                                            UrlEncode(image.subfolder), "&type=", UrlEncode(image.type));
      absl::StatusOr<HttpResponse> got = Request("GET", path, "", config.request_timeout);
      if (!got.ok()) return FailUnreachable(record, absl::StrCat("GET ", path), got.status());
      if (got->status != 200 || got->body.empty()) {
        return Fail(record, absl::StrCat("output image ", image.filename, " of node ", image.node, " is missing: GET ",
                                         path, " answered ", got->status,
                                         got->body.empty() ? " with an empty body" : ""));
      }
      v1::Output* output = record->add_outputs();
      output->set_kind("image");
      output->set_name(image.subfolder.empty() ? image.filename : absl::StrCat(image.subfolder, "/", image.filename));
      output->set_sha256(Sha256Hex(got->body));
      output->set_size_bytes(got->body.size());
      hashes.push_back(output->sha256());
    }
    AddMetric(record, "images", hashes.size(), "images");
    if (wall > absl::ZeroDuration()) {
      AddMetric(record, "images_per_second", double(hashes.size()) / absl::ToDoubleSeconds(wall), "images/s");
    }

    // ComfyUI's report, where it exists, alone decides: a fast run of which it says nothing was
    // cached measured (a small graph, --cache-none); timing decides only without a report.
    std::string reason;
    params["cache_report"] = execution->cached_seen ? "execution_cached" : "missing";
    if (execution->cached_seen) {
      comfyui::CacheReport report;
      report.cached = execution->cached;
      report.executed = execution->executed;
      for (const comfyui::ImageRef& image : execution->images) report.image_nodes.push_back(image.node);
      reason = comfyui::ReportedCacheHitReason(input.phase, config.graph, PerRunTargets(), report);
    } else if (input.phase == v1::PHASE_COLD) {
      reason = "cold run: ComfyUI reported no execution_cached message, so a cold state cannot be confirmed";
    } else {
      reason = s_->outputs.Check(graph_sha256, hashes, wall, config.cache_hit_threshold);
    }
    if (!reason.empty()) {
      v1::Flag* flag = record->add_flags();
      flag->set_code(comfyui::kCacheHitFlag);
      flag->set_reason(reason);
    }
    s_->outputs.Remember(graph_sha256, hashes);

    SampleDevices("after run", &memory);
    if (config.pid.has_value()) {
      if (std::optional<uint64_t> peak = PeakRss(*config.pid)) {
        v1::MemoryFigure figure;
        figure.set_kind(v1::MEMORY_KIND_PROCESS_PEAK_RSS);
        figure.set_scope(kBackendName);
        figure.set_bytes(*peak);
        figure.set_source(peak_reset ? absl::StrCat("/proc/", *config.pid, "/status VmHWM since a /proc/", *config.pid,
                                                    "/clear_refs reset before the run")
                                     : absl::StrCat("/proc/", *config.pid,
                                                    "/status VmHWM (lifetime peak since the process started)"));
        memory.push_back(std::move(figure));
      }
    }
    for (v1::MemoryFigure& figure : memory) *record->add_memory() = std::move(figure);
    record->mutable_status()->set_code(v1::RunStatus::CODE_OK);
  }

 private:
  // Returns the targets whose value changes from run to run: the seed. Steps, prompt and size stay
  // the same within a combination, so a node that depends only on them (the text encoder, the
  // empty latent) is legitimately cached in warm runs, like the checkpoint loader. Without a
  // seed target, every target counts.
  std::vector<comfyui::SetTarget> PerRunTargets() const {
    std::vector<comfyui::SetTarget> out;
    for (const comfyui::SetTarget& t : s_->config.set) {
      if (t.name == "seed") out.push_back(t);
    }
    return out.empty() ? s_->config.set : out;
  }

  // Validation i: seeds[i]; cold: seeds[0]; warm k (1-based): seeds[k % n], so no run repeats
  // the inputs of the run before it when there are two seeds or more.
  RunValues ValuesFor(const RunInput& input) {
    const ComfyUiConfig& config = s_->config;
    RunValues v;
    if (!config.seeds.empty()) {
      const size_t n = config.seeds.size();
      size_t index = 0;
      if (input.phase == v1::PHASE_VALIDATION) index = input.input_index % n;
      if (input.phase == v1::PHASE_WARM) index = input.call_index % n;
      uint64_t seed = config.seeds[index];
      if (config.distinct_runs && input.phase != v1::PHASE_VALIDATION) {
        seed += (s_->runs_made + 1) * kDistinctSeedStep;  // wraps modulo 2^64, as ComfyUI's seeds may
      }
      v.seed = seed;
      v.literals["seed"] = absl::StrCat(seed);
    }
    ++s_->runs_made;
    auto number = [&](const char* name, const std::optional<int64_t>& value) {
      if (!config.sets(name)) return;
      if (auto it = combination_.find(name); it != combination_.end()) {
        v.literals[name] = it->second;
      } else if (value.has_value()) {
        v.literals[name] = absl::StrCat(*value);
      }
    };
    number("steps", config.steps);
    number("width", config.width);
    number("height", config.height);
    if (config.sets("prompt") && config.prompt.has_value()) v.literals["prompt"] = nlohmann::json(*config.prompt).dump();
    return v;
  }

  absl::StatusOr<HttpResponse> Request(const std::string& method, const std::string& path, const std::string& body,
                                       absl::Duration timeout) {
    HttpRequest request;
    request.method = method;
    request.url = s_->config.url + path;
    request.body = body;
    request.connect_timeout = kConnectTimeout;
    request.total_timeout = timeout;
    return s_->http->Send(request);
  }

  // Waits for the prompt to finish: on the websocket, or by polling /history when there is none
  // (or it breaks). Every wait ends at the run deadline. *finished: when the end was seen (the
  // execution_success message, or the /history answer that showed it).
  absl::StatusOr<Execution> Follow(const std::string& prompt_id, WebSocketConnection* ws, absl::Duration started,
                                   google::protobuf::Map<std::string, std::string>* params,
                                   absl::Duration* finished) {
    Clock& clock = s_->context.env->clock();
    const absl::Duration deadline = started + s_->config.run_timeout;
    auto timed_out = [&] {
      return absl::DeadlineExceededError(absl::StrCat("ComfyUI did not finish prompt ", prompt_id, " within run_timeout ",
                                                      absl::FormatDuration(s_->config.run_timeout)));
    };
    if (ws != nullptr) {
      comfyui::ExecutionTracker tracker(prompt_id);
      while (true) {
        const absl::Duration left = deadline - clock.Monotonic();
        if (left <= absl::ZeroDuration()) return timed_out();
        absl::StatusOr<std::string> message = ws->ReceiveText(std::min(left, s_->deps.websocket_wait_slice));
        if (!message.ok()) {
          if (message.status().code() == absl::StatusCode::kDeadlineExceeded) continue;
          (*params)["progress_source"] =
              absl::StrCat("websocket, then history polling (", message.status().message(), ")");
          break;
        }
        absl::StatusOr<std::optional<comfyui::Progress>> fed = tracker.Feed(*message);
        if (!fed.ok()) {
          return absl::InternalError(absl::StrCat("ComfyUI's websocket sent ", fed.status().message()));
        }
        if (fed->has_value() && s_->deps.on_progress) {
          s_->deps.on_progress(ComfyUiProgress{(*fed)->node, (*fed)->value, (*fed)->max});
        }
        if (tracker.execution().finished) {
          *finished = clock.Monotonic();
          Execution execution = tracker.execution();
          // The websocket names the images in `executed`; /history is the complete list. And a
          // websocket that joined late (a loaded host) missed execution_cached: /history keeps
          // every message of the prompt, so the cache verdict comes from there instead.
          if ((execution.success && execution.images.empty()) || !execution.cached_seen) {
            absl::StatusOr<std::optional<Execution>> history = History(prompt_id);
            if (history.ok() && history->has_value()) {
              if (execution.images.empty()) execution.images = (*history)->images;
              if (!execution.cached_seen && (*history)->cached_seen) {
                // The executing messages seen are those after the join: history's list is whole.
                execution.cached_seen = true;
                execution.cached = (*history)->cached;
                execution.executed = (*history)->executed;
              }
            }
          }
          return execution;
        }
      }
    }
    while (true) {
      absl::StatusOr<std::optional<Execution>> history = History(prompt_id);
      if (!history.ok()) return history.status();
      if (history->has_value()) {
        *finished = clock.Monotonic();
        return std::move(**history);
      }
      const absl::Duration left = deadline - clock.Monotonic();
      if (left <= absl::ZeroDuration()) return timed_out();
      clock.SleepFor(std::min(left, s_->deps.poll_interval));
    }
  }

  absl::StatusOr<std::optional<Execution>> History(const std::string& prompt_id) {
    const std::string path = absl::StrCat("/history/", prompt_id);
    absl::StatusOr<HttpResponse> got = Request("GET", path, "", s_->config.request_timeout);
    if (!got.ok()) {
      return absl::Status(got.status().code() == absl::StatusCode::kDeadlineExceeded ? absl::StatusCode::kDeadlineExceeded
                                                                                      : absl::StatusCode::kUnavailable,
                          absl::StrCat("ComfyUI is unreachable (GET ", path, "): ", got.status().message()));
    }
    if (got->status != 200) {
      return absl::InternalError(absl::StrCat("GET ", path, " answered ", got->status, ": ", QuoteBody(got->body)));
    }
    absl::StatusOr<std::optional<Execution>> parsed =
        comfyui::ParseHistory(got->body, prompt_id, s_->config.graph.node_ids());
    if (!parsed.ok()) return absl::InternalError(absl::StrCat("GET ", path, ": ", parsed.status().message()));
    return parsed;
  }

  // Adds the device figures of /system_stats (best effort: a failed sample adds none).
  void SampleDevices(const std::string& when, std::vector<v1::MemoryFigure>* out) {
    absl::StatusOr<HttpResponse> got = Request("GET", "/system_stats", "", s_->config.request_timeout);
    if (!got.ok() || got->status != 200) return;
    absl::StatusOr<SystemStats> stats = comfyui::ParseSystemStats(got->body);
    if (!stats.ok()) return;
    for (const comfyui::Device& d : stats->devices) {
      // On CPU ComfyUI reports the machine's RAM in the vram fields.
      const std::string source =
          d.type == "cpu" ? absl::StrCat(kStatsSource, " (cpu device: system RAM, not VRAM)") : kStatsSource;
      v1::MemoryFigure used;
      used.set_kind(v1::MEMORY_KIND_DEVICE_USED);
      used.set_scope(absl::StrCat(d.name, " vram_total-vram_free ", when));
      used.set_bytes(d.vram_total >= d.vram_free ? d.vram_total - d.vram_free : 0);
      used.set_source(source);
      out->push_back(used);
      v1::MemoryFigure torch;
      torch.set_kind(v1::MEMORY_KIND_DEVICE_USED);
      torch.set_scope(absl::StrCat(d.name, " torch_vram_total-torch_vram_free ", when));
      torch.set_bytes(d.torch_vram_total >= d.torch_vram_free ? d.torch_vram_total - d.torch_vram_free : 0);
      torch.set_source(source);
      out->push_back(torch);
    }
  }

  std::optional<uint64_t> PeakRss(int64_t pid) {
    absl::StatusOr<std::string> status = s_->context.env->ReadFile(absl::StrCat("/proc/", pid, "/status"));
    if (!status.ok()) return std::nullopt;
    const size_t at = status->find("VmHWM:");
    if (at == std::string::npos) return std::nullopt;
    const size_t end = status->find('\n', at);
    std::string value = status->substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
    value.erase(std::remove_if(value.begin(), value.end(), [](char c) { return !std::isdigit(static_cast<unsigned char>(c)); }),
                value.end());
    uint64_t kib = 0;
    if (!absl::SimpleAtoi(value, &kib)) return std::nullopt;
    return kib * 1024;
  }

  static void AddMetric(v1::RunRecord* record, const char* name, double value, const char* unit) {
    v1::Metric* metric = record->add_metrics();
    metric->set_name(name);
    metric->set_value(value);
    metric->set_unit(unit);
  }

  void FailUnreachable(v1::RunRecord* record, const std::string& what, const absl::Status& status) {
    if (status.code() == absl::StatusCode::kUnavailable || status.code() == absl::StatusCode::kDeadlineExceeded) {
      alive_ = false;
      dead_reason_ = absl::StrCat("an earlier run failed: ComfyUI is unreachable (", what, "): ", status.message());
    }
    Fail(record, absl::StrCat("ComfyUI is unreachable (", what, "): ", status.message()));
  }

  void Fail(v1::RunRecord* record, std::string message) {
    v1::RunStatus* status = record->mutable_status();
    status->set_code(v1::RunStatus::CODE_FAILED);
    status->set_message(std::move(message));
  }

  std::shared_ptr<Shared> s_;
  Combination combination_;
  SessionInfo info_;
  SystemStats stats_;
  bool alive_ = true;
  std::string dead_reason_;
};

class ComfyUiBackend : public Backend {
 public:
  explicit ComfyUiBackend(std::shared_ptr<Shared> shared) : s_(std::move(shared)) {}

  std::string name() const override { return kBackendName; }
  FigureDeclarations figures() const override { return comfyui::kFigures; }
  std::vector<std::string> matrix_axes() const override { return {"steps", "width", "height"}; }

  std::vector<std::string> default_axis_values(const std::string& axis) const override {
    const ComfyUiConfig& c = s_->config;
    const std::optional<int64_t>& value = axis == "steps" ? c.steps : axis == "width" ? c.width : c.height;
    if (!value.has_value() || (axis != "steps" && axis != "width" && axis != "height")) return {};
    return {absl::StrCat(*value)};
  }

  absl::Status CheckCombination(const Combination& combination) const override {
    for (const auto& [axis, value] : combination) {
      if (axis != "steps" && axis != "width" && axis != "height") continue;
      if (!s_->config.sets(axis)) {
        return absl::InvalidArgumentError(absl::StrCat("matrix axis ", axis, " needs comfyui.set.", axis,
                                                       ": the workflow input it goes to"));
      }
      int64_t n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < 1) {
        return absl::InvalidArgumentError(absl::StrCat("matrix value ", axis, "=", value, " is not a positive integer"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<BackendSession>> Open(const Combination& combination, std::string* log_tail) override {
    if (!s_->rejected.ok()) return s_->rejected;
    if (absl::Status s = CheckCombination(combination); !s.ok()) return s;
    HttpRequest request;
    request.url = s_->config.url + "/system_stats";
    request.connect_timeout = kConnectTimeout;
    request.total_timeout = s_->config.request_timeout;
    absl::StatusOr<HttpResponse> got = s_->http->Send(request);
    if (!got.ok()) {
      return absl::UnavailableError(
          absl::StrCat("ComfyUI at ", s_->config.url, " is unreachable: ", got.status().message()));
    }
    if (got->status != 200) {
      return absl::UnavailableError(
          absl::StrCat("GET ", s_->config.url, "/system_stats answered ", got->status, ": ", QuoteBody(got->body)));
    }
    absl::StatusOr<SystemStats> stats = comfyui::ParseSystemStats(got->body);
    if (!stats.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("GET ", s_->config.url, "/system_stats: ", stats.status().message()));
    }
    SessionInfo info;
    info.backend_version = stats->comfyui_version;
    info.simulated = stats->simulated;
    info.params["comfyui_version"] = stats->comfyui_version;
    info.params["python_version"] = stats->python_version;
    info.params["pytorch_version"] = stats->pytorch_version;
    info.params["os"] = stats->os;
    std::vector<std::string> devices;
    for (const comfyui::Device& d : stats->devices) {
      devices.push_back(absl::StrCat(d.name, " (", d.type, ", vram_total ", d.vram_total, " B)"));
    }
    info.params["devices"] = absl::StrJoin(devices, "; ");
    // What the server says it runs on is part of the series' conditions (and their fingerprint):
    // a torch upgrade or a switch from a GPU to --cpu is another series. Free memory is not.
    auto condition = [&](const char* key, const std::string& value) {
      if (!value.empty()) info.conditions[key] = value;
    };
    condition("comfyui_version", stats->comfyui_version);
    condition("python_version", stats->python_version);
    condition("pytorch_version", stats->pytorch_version);
    std::vector<std::string> device_names;
    for (const comfyui::Device& d : stats->devices) device_names.push_back(absl::StrCat(d.name, " (", d.type, ")"));
    condition("devices", absl::StrJoin(device_names, "; "));
    info.params["workflow_sha256"] = Sha256Hex(s_->config.graph.text());
    info.params["workflow_file"] = kWorkflowCopy;
    info.params["url"] = s_->config.url;
    info.params["distinct_runs"] = s_->config.distinct_runs ? "true" : "false";
    if (s_->context.log) {
      s_->context.log(absl::StrCat("comfyui ", stats->comfyui_version, " at ", s_->config.url,
                                   stats->simulated ? " (SIMULATED)" : ""));
    }
    return std::unique_ptr<BackendSession>(new ComfyUiSession(s_, combination, std::move(info), std::move(*stats)));
  }

 private:
  std::shared_ptr<Shared> s_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> NewComfyUiBackendWith(const YAML::Node& section,
                                                               const BackendContext& context,
                                                               ComfyUiDependencies dependencies) {
  if (context.env == nullptr || context.allow == nullptr) {
    return absl::InvalidArgumentError("the comfyui backend needs an Env and an allow-list");
  }
  absl::StatusOr<ComfyUiConfig> config = comfyui::ParseComfyUiSection(section, *context.allow, context.env, context.spec_author);
  if (!config.ok()) return config.status();
  if (context.services.http == nullptr) {
    return absl::FailedPreconditionError("the comfyui backend needs the agent's HTTP client (BackendContext::services)");
  }
  auto shared = std::make_shared<Shared>();
  shared->config = std::move(*config);
  shared->context = context;
  shared->deps = std::move(dependencies);
  shared->http = context.services.http;
  if (!context.work_dir.empty()) {
    // The workflow as run, verbatim, beside the records.
    if (absl::Status s = context.env->CreateDirs(context.work_dir); !s.ok()) return s;
    if (absl::Status s = context.env->WriteFileAtomically(JoinPath(context.work_dir, kWorkflowCopy),
                                                          shared->config.graph.text());
        !s.ok()) {
      return s;
    }
  }
  return std::unique_ptr<Backend>(new ComfyUiBackend(std::move(shared)));
}

absl::StatusOr<std::unique_ptr<Backend>> NewComfyUiBackend(const YAML::Node& section, const BackendContext& context) {
  ComfyUiDependencies deps;
  if (context.step_progress) {
    deps.on_progress = [progress = context.step_progress](const ComfyUiProgress& p) {
      progress(absl::StrCat("node ", p.node), p.value, p.max);
    };
  }
  return NewComfyUiBackendWith(section, context, std::move(deps));
}

}  // namespace benchfleet::agent
