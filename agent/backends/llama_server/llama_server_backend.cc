#include "agent/backends/llama_server/llama_server_backend.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/backends/llama_server/completion_parser.h"
#include "agent/backends/llama_server/figures.h"
#include "agent/backends/llama_server/llama_server_config.h"
#include "agent/backends/llama_server/log_memory_parser.h"
#include "agent/backends/llama_server/offload_check.h"
#include "agent/backends/llama_server/server_props.h"
#include "agent/http/http_client.h"
#include "common/string_views.h"
#include "common/hashing.h"
#include "common/output_determinism.h"
#include "common/llama_cpp_log.h"
#include "common/proto_time.h"
#include "common/simulated.h"

namespace benchfleet::agent {
namespace {

using llama_server::Completion;
using llama_server::LlamaServerConfig;

constexpr char kBackendName[] = "llama-server";
// -lv 4: the verbosity at which llama-server prints its buffer sizes.
constexpr char kVerbosity[] = "4";
constexpr size_t kLogTailLines = 30;
constexpr absl::Duration kConnectTimeout = absl::Seconds(5);
constexpr absl::Duration kHealthRequestTimeout = absl::Seconds(5);
// After a failed request, how long to wait for the server to finish dying, so that a crash is
// reported as a crash and not as a refused connection.
constexpr absl::Duration kDeathCheckWait = absl::Milliseconds(500);

// Joins arguments for the record, quoting those a shell would split.
std::string JoinArgs(const std::vector<std::string>& args) {
  std::vector<std::string> quoted;
  for (const std::string& arg : args) {
    if (!arg.empty() && arg.find_first_of(" \t\n'\"\\$") == std::string::npos) {
      quoted.push_back(arg);
    } else {
      std::string q = "'";
      for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      quoted.push_back(q + "'");
    }
  }
  return absl::StrJoin(quoted, " ");
}

// Describes an answer of /health for a message: "503 Loading model", "200".
std::string DescribeHealth(const absl::StatusOr<HttpResponse>& response) {
  if (!response.ok()) return absl::StrCat("failed: ", response.status().message());
  std::string out = absl::StrCat("answered ", response->status);
  if (std::optional<llama_server::ServerError> error = llama_server::ParseServerError(response->body)) {
    absl::StrAppend(&out, " ", error->message);
  }
  return out;
}

class LlamaServerSession : public BackendSession {
 public:
  struct Parts {
    // Shared with the backend, so a session may outlive it.
    std::shared_ptr<const LlamaServerConfig> config;
    BackendContext context;
    std::shared_ptr<HttpClient> http;
    std::unique_ptr<Process> process;  // null for a server given by url
    std::string base_url;
    std::string log_path;  // empty for a server given by url
    std::string mode;
    int n_predict;
    SessionInfo info;
    std::vector<v1::MemoryFigure> log_memory;
    // NO_OFFLOAD or PARTIAL_OFFLOAD, on every run of the session (offload_check.h).
    std::optional<v1::Flag> offload_flag;
  };

  explicit LlamaServerSession(Parts parts) : p_(std::move(parts)) {}
  ~LlamaServerSession() override { (void)Close(); }

  const SessionInfo& info() const override { return p_.info; }
  bool alive() const override { return alive_; }

  void Run(const RunInput& input, v1::RunRecord* record) override {
    Clock& clock = p_.context.env->clock();
    record->set_backend(kBackendName);
    record->set_mode(p_.mode);
    auto& params = *record->mutable_params();
    for (const auto& [key, value] : p_.info.params) params[key] = value;
    params["prompt_sha256"] = Sha256Hex(p_.config->prompt);
    params["n_predict"] = absl::StrCat(p_.n_predict);
    params["seed"] = absl::StrCat(p_.config->seed);
    params["temperature"] = "0";
    params["cache_prompt"] = "false";
    params["stream"] = p_.config->stream ? "true" : "false";
    // Temperature 0 and a fixed seed (the config refuses llama.cpp's random one): these inputs
    // decide the content, and runs with the same value should answer the same (the task names
    // the model; the mode is compared apart). common/output_determinism.h.
    params[std::string(kInputsSha256Param)] =
        Sha256Hex(nlohmann::json{{"backend", kBackendName}, {"n_predict", p_.n_predict},
                                 {"prompt", p_.config->prompt}, {"seed", p_.config->seed}, {"temperature", 0}}
                      .dump());

    if (alive_ && p_.process != nullptr && !p_.process->Running()) {
      alive_ = false;
      dead_reason_ = absl::StrCat("it exited between runs (", p_.process->exit_status()->ToString(), ")");
    }
    if (!alive_) {
      const absl::Time now = clock.Now();
      SetTimestamp(now, record->mutable_start_time());
      SetTimestamp(now, record->mutable_end_time());
      return Fail(record, absl::StrCat("llama-server is not running: ", dead_reason_));
    }

    const std::string body = nlohmann::json{{"prompt", p_.config->prompt},
                                            {"n_predict", p_.n_predict},
                                            {"temperature", 0},
                                            {"seed", p_.config->seed},
                                            {"cache_prompt", false},
                                            {"stream", p_.config->stream}}
                                 .dump();
    HttpRequest request;
    request.method = "POST";
    request.url = p_.base_url + "/completion";
    request.body = body;
    request.connect_timeout = kConnectTimeout;
    request.total_timeout = p_.config->request_timeout;

    llama_server::SseTokenWatcher watcher;
    std::optional<absl::Duration> first_token;
    absl::Duration started;
    ChunkCallback on_chunk = nullptr;
    if (p_.config->stream) {
      on_chunk = [&](std::string_view chunk) {
        if (watcher.Feed(chunk) && !first_token.has_value()) first_token = clock.Monotonic() - started;
        return true;
      };
    }
    // The server's peak memory from here on is this run's (Linux: /proc/PID/clear_refs); where the
    // platform cannot reset it, the figure's source says it is the server's lifetime peak.
    if (p_.process != nullptr) {
      if (absl::Status reset = p_.process->ResetPeakMemory(); !reset.ok() && !absl::IsUnimplemented(reset)) {
        params["memory_peak_reset_error"] = std::string(reset.message());
      }
    }
    const absl::Time start_time = clock.Now();
    started = clock.Monotonic();
    absl::StatusOr<HttpResponse> response = p_.http->Send(request, on_chunk);
    const absl::Duration wall = clock.Monotonic() - started;
    const absl::Time end_time = clock.Now();
    SetTimestamp(start_time, record->mutable_start_time());
    SetTimestamp(end_time, record->mutable_end_time());
    SetDuration(wall, record->mutable_wall_duration());

    if (!response.ok()) {
      if (p_.process != nullptr && p_.process->Wait(kDeathCheckWait).ok()) {
        alive_ = false;
        dead_reason_ = absl::StrCat("it exited during an earlier run (", p_.process->exit_status()->ToString(), ")");
        return Fail(record, absl::StrCat("llama-server exited during the run (", p_.process->exit_status()->ToString(),
                                         "): ", response.status().message()));
      }
      // A server that refuses connections or does not answer in time is of no use for the
      // runs that follow; a truncated answer may be a one-off.
      if (response.status().code() == absl::StatusCode::kUnavailable ||
          response.status().code() == absl::StatusCode::kDeadlineExceeded) {
        alive_ = false;
        dead_reason_ = absl::StrCat("an earlier run failed: ", response.status().message());
      }
      return Fail(record, std::string(response.status().message()));
    }
    if (response->status != 200) {
      if (std::optional<llama_server::ServerError> error = llama_server::ParseServerError(response->body)) {
        return Fail(record, absl::StrCat("llama-server answered ", response->status,
                                         error->type.empty() ? "" : absl::StrCat(" (", error->type, ")"), ": ",
                                         error->message));
      }
      return Fail(record, absl::StrCat("llama-server answered ", response->status,
                                       " with a body that is not a llama-server error: ", QuoteBody(response->body)));
    }
    absl::StatusOr<Completion> completion = p_.config->stream ? llama_server::ParseCompletionStream(response->body)
                                                              : llama_server::ParseCompletionJson(response->body);
    if (!completion.ok()) {
      return Fail(record,
                  absl::StrCat("llama-server answered 200 with a body that is not a completion: ",
                               completion.status().message()));
    }

    params["stop_type"] = completion->stop_type;
    for (v1::Metric& metric : llama_server::CompletionMetrics(*completion)) *record->add_metrics() = std::move(metric);
    if (first_token.has_value()) {
      v1::Metric* metric = record->add_metrics();
      metric->set_name("time_to_first_token_seconds");
      metric->set_value(absl::ToDoubleSeconds(*first_token));
      metric->set_unit("s");
    }
    v1::Output* output = record->add_outputs();
    output->set_kind("text");
    output->set_name("content");
    output->set_sha256(Sha256Hex(completion->content));
    output->set_size_bytes(completion->content.size());

    if (std::optional<double> cache_n = completion->timing("cache_n"); cache_n.has_value() && *cache_n > 0) {
      v1::Flag* flag = record->add_flags();
      flag->set_code("PROMPT_CACHE_USED");
      flag->set_reason(absl::StrCat("timings.cache_n = ", *cache_n,
                                    ": the server reused cached prompt tokens although the request set "
                                    "cache_prompt: false"));
    }

    if (p_.process != nullptr) {
      absl::StatusOr<PeakMemory> peak = p_.process->ReadPeakMemory();
      if (peak.ok()) {
        v1::MemoryFigure* figure = record->add_memory();
        figure->set_kind(peak->is_footprint ? v1::MEMORY_KIND_PROCESS_FOOTPRINT : v1::MEMORY_KIND_PROCESS_PEAK_RSS);
        figure->set_scope(kBackendName);
        figure->set_bytes(peak->bytes);
        figure->set_source(peak->source);
      }
    }
    for (const v1::MemoryFigure& figure : p_.log_memory) *record->add_memory() = figure;
    if (p_.offload_flag.has_value()) *record->add_flags() = *p_.offload_flag;
    record->mutable_status()->set_code(v1::RunStatus::CODE_OK);
  }

  absl::Status Close() override {
    if (closed_) return absl::OkStatus();
    closed_ = true;
    alive_ = false;
    dead_reason_ = "the session is closed";
    if (p_.process == nullptr) return absl::OkStatus();
    const bool was_running = p_.process->Running();
    const ExitStatus status = p_.process->Terminate(p_.config->stop_grace);
    if (p_.context.log) {
      if (!was_running) {
        p_.context.log(absl::StrCat("llama-server ", p_.mode, " had already exited (", status.ToString(), ")"));
      } else if (status.signal == SIGKILL) {
        p_.context.log(absl::StrCat("llama-server ", p_.mode, " did not stop within ",
                                     absl::FormatDuration(p_.config->stop_grace), " of SIGTERM: killed"));
      } else {
        p_.context.log(absl::StrCat("llama-server ", p_.mode, " stopped (", status.ToString(), ")"));
      }
    }
    return absl::OkStatus();
  }

 private:
  void Fail(v1::RunRecord* record, std::string message) {
    v1::RunStatus* status = record->mutable_status();
    status->set_code(v1::RunStatus::CODE_FAILED);
    status->set_message(std::move(message));
    if (!p_.log_path.empty()) {
      absl::StatusOr<std::string> tail = LogTail(p_.log_path, kLogTailLines);
      if (tail.ok()) status->set_log_tail(*tail);
    }
  }

  Parts p_;
  bool alive_ = true;
  bool closed_ = false;
  std::string dead_reason_;
};

class LlamaServerBackend : public Backend {
 public:
  LlamaServerBackend(LlamaServerConfig config, BackendContext context, LlamaServerDependencies deps,
                     std::shared_ptr<HttpClient> http)
      : config_(std::make_shared<const LlamaServerConfig>(std::move(config))),
        context_(std::move(context)),
        deps_(std::move(deps)),
        http_(std::move(http)) {}

  // Returns the combination's mode (the first of the section when it names none) and n_predict
  // (the section's when it names none) in *mode and *n_predict (either may be null).
  absl::Status ResolveCombination(const Combination& combination, std::string* mode_out,
                                  int* n_predict_out) const {
    const std::vector<std::string> modes = default_axis_values("mode");
    std::string mode = modes.front();
    if (auto it = combination.find("mode"); it != combination.end()) mode = it->second;
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
      return absl::InvalidArgumentError(
          config_->external()
              ? absl::StrCat("mode ", mode, " cannot be used: the server given by url is not started by the agent, "
                             "so its modes cannot be switched (its one mode is \"external\")")
              : absl::StrCat("unknown mode ", mode, " (the modes of llama-server.modes: ", absl::StrJoin(modes, ", "),
                             ")"));
    }
    int n_predict = config_->n_predict;
    if (auto it = combination.find("n_predict"); it != combination.end()) {
      if (!absl::SimpleAtoi(it->second, &n_predict) || n_predict < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("matrix value n_predict=", it->second, " is not a positive integer"));
      }
    }
    if (mode_out != nullptr) *mode_out = mode;
    if (n_predict_out != nullptr) *n_predict_out = n_predict;
    return absl::OkStatus();
  }

  std::string name() const override { return kBackendName; }
  FigureDeclarations figures() const override { return llama_server::kFigures; }
  std::vector<std::string> matrix_axes() const override { return {"mode", "n_predict"}; }

  std::vector<std::string> default_axis_values(const std::string& axis) const override {
    if (axis != "mode") return {};
    if (config_->external()) return {llama_server::kExternalMode};
    std::vector<std::string> modes;
    for (const auto& [mode, args] : config_->modes) modes.push_back(mode);
    return modes;
  }

  // Refuses a mode the section does not define and an n_predict that is not a positive number,
  // before anything runs.
  absl::Status CheckCombination(const Combination& combination) const override {
    return ResolveCombination(combination, nullptr, nullptr);
  }

  absl::StatusOr<std::unique_ptr<BackendSession>> Open(const Combination& combination,
                                                       std::string* log_tail) override {
    std::string mode;
    int n_predict = 0;
    if (absl::Status s = ResolveCombination(combination, &mode, &n_predict); !s.ok()) return s;

    Parts parts;
    parts.config = config_;
    parts.context = context_;
    parts.http = http_;
    parts.mode = mode;
    parts.n_predict = n_predict;
    if (config_->external()) {
      parts.base_url = config_->url;
      if (absl::Status s = WaitReady(parts, nullptr); !s.ok()) return s;
      if (absl::Status s = ReadProps(&parts); !s.ok()) return s;
      parts.info.params["modes_switchable"] = "false";
      Log(absl::StrCat("llama-server at ", config_->url, " is ready (", parts.info.backend_version, ")"));
      return std::unique_ptr<BackendSession>(new LlamaServerSession(std::move(parts)));
    }
    return Launch(std::move(parts), log_tail);
  }

 private:
  using Parts = LlamaServerSession::Parts;

  ProcessLauncher* launcher() { return context_.services.launcher; }
  HttpClient* http() { return http_.get(); }

  void Log(std::string_view line) const {
    if (context_.log) context_.log(line);
  }

  absl::StatusOr<std::unique_ptr<BackendSession>> Launch(Parts parts, std::string* log_tail) {
    Env* env = context_.env;
    if (!env->FileExists(config_->model)) {
      return absl::NotFoundError(absl::StrCat("model file ", config_->model, " does not exist"));
    }
    if (context_.work_dir.empty()) {
      return absl::FailedPreconditionError("no work_dir to write the llama-server log to");
    }
    if (absl::Status s = env->CreateDirs(context_.work_dir); !s.ok()) return s;
    // One log per start; a mode started again (another n_predict, another repetition) gets the
    // next free name, so no log is overwritten and each holds exactly one start.
    parts.log_path = JoinPath(context_.work_dir, absl::StrCat("llama-server-", parts.mode, ".log"));
    for (int i = 2; env->FileExists(parts.log_path); ++i) {
      parts.log_path = JoinPath(context_.work_dir, absl::StrCat("llama-server-", parts.mode, ".", i, ".log"));
    }
    absl::StatusOr<int> port = deps_.pick_port ? deps_.pick_port() : PickFreeLoopbackPort();
    if (!port.ok()) return port.status();

    const std::vector<std::string>* mode_args = nullptr;
    for (const auto& [mode, args] : config_->modes) {
      if (mode == parts.mode) mode_args = &args;
    }
    // What the spec controls, for the record (the host and port change with every start).
    std::vector<std::string> recorded = {"-m", config_->model, "-lv", kVerbosity};
    recorded.insert(recorded.end(), config_->args.begin(), config_->args.end());
    recorded.insert(recorded.end(), mode_args->begin(), mode_args->end());
    ProcessOptions options;
    options.argv = {config_->binary, "-m", config_->model, "--host", "127.0.0.1", "--port", absl::StrCat(*port),
                    "-lv", kVerbosity};
    options.argv.insert(options.argv.end(), config_->args.begin(), config_->args.end());
    options.argv.insert(options.argv.end(), mode_args->begin(), mode_args->end());
    options.log_path = parts.log_path;

    Log(absl::StrCat("llama-server ", parts.mode, ": starting ", JoinArgs(options.argv), " (log: ", parts.log_path,
                     ")"));
    absl::StatusOr<std::unique_ptr<Process>> process = launcher()->Start(options);
    if (!process.ok()) return process.status();
    parts.process = std::move(*process);
    parts.base_url = absl::StrCat("http://127.0.0.1:", *port);

    auto fail = [&](absl::Status status) {
      parts.process->Terminate(config_->stop_grace);
      absl::StatusOr<std::string> tail = LogTail(parts.log_path, kLogTailLines);
      if (log_tail != nullptr && tail.ok()) *log_tail = *tail;
      return status;
    };
    if (absl::Status s = WaitReady(parts, &parts.log_path); !s.ok()) return fail(s);
    if (absl::Status s = ReadProps(&parts); !s.ok()) return fail(s);

    parts.info.params["server_verbosity"] = kVerbosity;
    parts.info.params["modes_switchable"] = "true";
    parts.info.params["server_args"] = JoinArgs(recorded);
    // The devices, the offload and the buffer sizes are printed while the model loads, so they
    // are all in the log by now. What the server says it did decides what the mode is called.
    absl::StatusOr<std::string> log = env->ReadFile(parts.log_path);
    if (!log.ok()) {
      return fail(absl::Status(log.status().code(), absl::StrCat("cannot read llama-server's log ", parts.log_path,
                                                                 " to see what it offloaded: ",
                                                                 log.status().message())));
    }
    const llama_cpp::LogReport report = llama_cpp::ParseLogReport(*log);
    parts.log_memory = llama_server::LogMemoryFigures(llama_server::ParseLogMemory(*log), report);
    std::vector<std::string> mode_and_common = config_->args;
    mode_and_common.insert(mode_and_common.end(), mode_args->begin(), mode_args->end());
    llama_server::OffloadVerdict offload = llama_server::JudgeOffload(
        parts.mode, llama_server::ReadOffloadRequest(mode_and_common), report,
        config_->allow_no_offload.contains(parts.mode), config_->allow_partial_offload.contains(parts.mode));
    if (!offload.open_error.ok()) return fail(offload.open_error);
    if (!offload.devices.empty()) {
      parts.info.params["devices"] = offload.devices;
      parts.info.conditions["devices"] = offload.devices;
    }
    if (!offload.offloaded_layers.empty()) parts.info.params["offloaded_layers"] = offload.offloaded_layers;
    parts.offload_flag = std::move(offload.flag);
    if (parts.offload_flag.has_value()) {
      Log(absl::StrCat("llama-server ", parts.mode, ": ", parts.offload_flag->code(), ": ",
                       parts.offload_flag->reason()));
    }
    std::string ran_on;
    if (!offload.devices.empty()) absl::StrAppend(&ran_on, "; GPUs: ", offload.devices);
    if (!offload.offloaded_layers.empty()) absl::StrAppend(&ran_on, "; offloaded ", offload.offloaded_layers, " layers");
    Log(absl::StrCat("llama-server ", parts.mode, " is ready on ", parts.base_url, " (", parts.info.backend_version,
                     ran_on, ")"));
    return std::unique_ptr<BackendSession>(new LlamaServerSession(std::move(parts)));
  }

  // Polls /health until it answers 200, the server exits (a started one) or health_timeout
  // passes on the Env's clock.
  absl::Status WaitReady(const Parts& parts, const std::string* log_path) {
    Clock& clock = context_.env->clock();
    const absl::Duration deadline = clock.Monotonic() + config_->health_timeout;
    HttpRequest request;
    request.url = parts.base_url + "/health";
    request.connect_timeout = std::min(kConnectTimeout, config_->health_timeout);
    request.total_timeout = std::min(kHealthRequestTimeout, config_->health_timeout);
    std::string last = "was never asked";
    while (true) {
      if (parts.process != nullptr && !parts.process->Running()) {
        return absl::UnavailableError(absl::StrCat("llama-server exited while loading (",
                                                   parts.process->exit_status()->ToString(), "); its log: ",
                                                   *log_path));
      }
      absl::StatusOr<HttpResponse> response = http()->Send(request);
      if (response.ok() && response->status == 200) return absl::OkStatus();
      last = DescribeHealth(response);
      if (clock.Monotonic() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat("llama-server was not ready within ",
                                                        absl::FormatDuration(config_->health_timeout),
                                                        ": the last GET /health ", last));
      }
      // A stop (the agent's SIGTERM, the task's cancel) ends the wait at once; Launch then stops
      // the server it started.
      if (clock.WaitForStop(context_.stop, deps_.health_poll_interval)) {
        return absl::CancelledError(
            absl::StrCat("stopped while waiting for llama-server to be ready (the last GET /health ", last, ")"));
      }
    }
  }

  absl::Status ReadProps(Parts* parts) {
    HttpRequest request;
    request.url = parts->base_url + "/props";
    request.connect_timeout = kConnectTimeout;
    request.total_timeout = std::min(kHealthRequestTimeout * 6, config_->request_timeout);
    absl::StatusOr<HttpResponse> response = http()->Send(request);
    if (!response.ok()) {
      return absl::Status(response.status().code(),
                          absl::StrCat("cannot read llama-server's /props: ", response.status().message()));
    }
    if (response->status != 200) {
      return absl::UnavailableError(absl::StrCat("cannot read llama-server's /props: it answered ", response->status,
                                                 ": ", QuoteBody(response->body)));
    }
    absl::StatusOr<llama_server::ServerProps> props = llama_server::ParseServerProps(response->body);
    if (!props.ok()) {
      return absl::Status(props.status().code(),
                          absl::StrCat("cannot read llama-server's /props: ", props.status().message()));
    }
    parts->info.backend_version = props->build_info;
    parts->info.simulated = SaysSimulated(props->build_info);
    if (!props->model_path.empty()) parts->info.params["model_path"] = props->model_path;
    if (props->n_ctx.has_value()) parts->info.params["n_ctx"] = absl::StrCat(*props->n_ctx);
    if (props->total_slots.has_value()) parts->info.params["total_slots"] = absl::StrCat(*props->total_slots);
    return absl::OkStatus();
  }

  const std::shared_ptr<const LlamaServerConfig> config_;
  const BackendContext context_;
  const LlamaServerDependencies deps_;
  const std::shared_ptr<HttpClient> http_;
};

}  // namespace

absl::StatusOr<int> PickFreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot find a free loopback port: ", std::strerror(err)));
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

absl::StatusOr<std::unique_ptr<Backend>> NewLlamaServerBackendWith(const YAML::Node& section,
                                                                   const BackendContext& context,
                                                                   LlamaServerDependencies dependencies) {
  if (context.env == nullptr || context.allow == nullptr) {
    return absl::InvalidArgumentError("the llama-server backend needs an Env and an allow-list");
  }
  absl::StatusOr<LlamaServerConfig> config = llama_server::ParseLlamaServerSection(section, *context.allow);
  if (!config.ok()) return config.status();
  if (context.services.launcher == nullptr || context.services.http == nullptr) {
    return absl::FailedPreconditionError(
        "the llama-server backend needs the agent's process launcher and HTTP client (BackendContext::services)");
  }
  // The agent's client, borrowed (no-op deleter): it outlives the backend and its sessions.
  std::shared_ptr<HttpClient> http(context.services.http, [](HttpClient*) {});
  return std::unique_ptr<Backend>(
      new LlamaServerBackend(std::move(*config), context, std::move(dependencies), std::move(http)));
}

absl::StatusOr<std::unique_ptr<Backend>> NewLlamaServerBackend(const YAML::Node& section,
                                                               const BackendContext& context) {
  return NewLlamaServerBackendWith(section, context, LlamaServerDependencies{});
}

}  // namespace benchfleet::agent
