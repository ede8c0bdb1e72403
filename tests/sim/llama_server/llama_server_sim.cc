#include "tests/sim/llama_server/llama_server_sim.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

#include "tests/sim/llama_server/token_model.h"

namespace benchfleet::sim {

std::atomic<bool> g_server_ready{false};

namespace {

using Clock = std::chrono::steady_clock;

const char kJsonType[] = "application/json; charset=utf-8";
const char kGarbage[] = "llama-server-sim garbage-on-request: \x01\x02 this is not JSON }{\n";

std::chrono::microseconds Seconds(double s) {
  return std::chrono::microseconds(static_cast<int64_t>(s * 1e6));
}

int64_t Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::microseconds>(b - a).count();
}

std::string SseEvent(const std::string& payload) { return "data: " + payload + "\n\n"; }

// The model file must be a readable regular file; its content is not looked at.
bool CheckModelFile(const std::string& path, std::string* reason) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    *reason = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *reason = std::strerror(EISDIR);
    return false;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *reason = std::strerror(EACCES);
    return false;
  }
  return true;
}

}  // namespace

LlamaServerSim::LlamaServerSim(const SimOptions& options, SimLog& log, Clock::time_point start)
    : o_(options),
      log_(log),
      start_(start),
      start_unix_(static_cast<int64_t>(std::time(nullptr))),
      layout_(ComputeLayout(options)),
      host_(ReadHostInfo()),
      rng_(std::random_device{}()) {
  model_name_ = o_.aliases.empty() ? o_.model_path : o_.aliases.front();
  media_marker_ = "<__media_" + RandomAlnum(32) + "__>";
  defaults_.seed = static_cast<uint32_t>(o_.seed);
  defaults_.temperature = o_.temperature;
  defaults_.top_k = o_.top_k;
  defaults_.top_p = o_.top_p;
  defaults_.min_p = o_.min_p;
  defaults_.n_predict = o_.n_predict;
  for (uint32_t i = 0; i < layout_.n_seq; i++) {
    Slot s;
    s.id = static_cast<int>(i);
    slots_.push_back(s);
  }
}

int64_t LlamaServerSim::NowUs() const { return Us(start_, Clock::now()); }

std::string LlamaServerSim::RandomAlnum(size_t n) {
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  for (size_t i = 0; i < n; i++) out += kChars[rng_() % (sizeof(kChars) - 1)];
  return out;
}

int LlamaServerSim::Run(int shutdown_fd) {
  StartupLog startup(log_, o_, layout_, host_);
  startup.Preamble();
  std::string bind_error;
  if (!http_.Bind(o_.host, o_.port, &bind_error)) {
    startup.BindFailed();
    return 1;
  }
  http_.Start([this](const HttpRequest& req, HttpResponder& res) { Handle(req, res); });

  startup.LoadBegins();
  std::string reason;
  if (!CheckModelFile(o_.model_path, &reason)) {
    startup.ModelFileFailed(reason);
    return 1;
  }
  startup.LoaderMetadata();
  if (o_.sim_fail == FailMode::kExitDuringLoad) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o_.sim_load_ms / 2));
    startup.AllocationFailed();
    return 1;
  }
  if (o_.sim_fail == FailMode::kNeverReady) {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // a signal ends the process
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(std::max<int64_t>(0, o_.sim_load_ms)));
  startup.LoadCompletes("http://" + o_.host + ":" + std::to_string(o_.port));
  ready_ = true;
  g_server_ready = true;

  for (;;) {
    pollfd p{shutdown_fd, POLLIN, 0};
    if (::poll(&p, 1, -1) > 0) break;
  }
  startup.Shutdown();
  return 0;
}

HeaderList LlamaServerSim::BaseHeaders(const HttpRequest& req) const {
  return {{"Server", "llama.cpp"}, {"Access-Control-Allow-Origin", req.Header("Origin")}};
}

void LlamaServerSim::SendJson(const HttpRequest& req, HttpResponder& res, int status, const Json& body) {
  res.Send(status, BaseHeaders(req), kJsonType, Dump(body));
}

void LlamaServerSim::SendError(const HttpRequest& req, HttpResponder& res, int code, const std::string& message,
                               const std::string& type) {
  SendJson(req, res, code, ErrorJson(code, message, type));
}

void LlamaServerSim::Handle(const HttpRequest& req, HttpResponder& res) {
  if (req.method == "OPTIONS") {
    HeaderList h = BaseHeaders(req);
    h.emplace_back("Access-Control-Allow-Credentials", "true");
    h.emplace_back("Access-Control-Allow-Methods", "GET, POST");
    h.emplace_back("Access-Control-Allow-Headers", "*");
    res.Send(200, h, "text/html", "");
    return;
  }
  if (!ready_) {
    res.Send(503, BaseHeaders(req), kJsonType, LoadingBody());
    return;
  }
  const std::string& path = req.path;
  const bool public_path = path == "/health" || path == "/v1/health" || path == "/";
  if (!o_.api_key.empty() && !public_path) {
    std::string auth = req.Header("Authorization");
    if (auth.rfind("Bearer ", 0) == 0) auth = auth.substr(7);
    if (auth != o_.api_key && req.Header("X-Api-Key") != o_.api_key) {
      SendError(req, res, 401, "Invalid API Key", "authentication_error");
      return;
    }
  }
  if (req.method == "GET" && (path == "/health" || path == "/v1/health")) {
    res.Send(200, BaseHeaders(req), kJsonType, R"({"status":"ok"})");
  } else if (req.method == "GET" && (path == "/props" || path == "/v1/props")) {
    PropsInput in;
    in.defaults = defaults_;
    in.n_ctx_slot = layout_.n_ctx_seq;
    in.total_slots = static_cast<int>(layout_.n_seq);
    in.model_alias = model_name_;
    in.model_path = o_.model_path;
    in.media_marker = media_marker_;
    in.endpoint_slots = o_.slots;
    in.endpoint_props = o_.props;
    in.endpoint_metrics = o_.metrics;
    in.webui = o_.webui;
    in.build_info = BuildInfo();
    SendJson(req, res, 200, PropsJson(in));
  } else if (req.method == "GET" && path == "/metrics") {
    if (!o_.metrics) {
      SendError(req, res, 501, "This server does not support metrics endpoint. Start it with `--metrics`",
                "not_supported_error");
      return;
    }
    HandleMetrics(req, res);
  } else if (req.method == "GET" && path == "/slots") {
    if (!o_.slots) {
      SendError(req, res, 501, "This server does not support slots endpoint. Start it with `--slots`",
                "not_supported_error");
      return;
    }
    HandleSlots(req, res);
  } else if (req.method == "GET" && (path == "/models" || path == "/v1/models")) {
    HandleModels(req, res);
  } else if (req.method == "POST" && (path == "/completion" || path == "/completions")) {
    HandleCompletion(req, res, /*oai=*/false);
  } else if (req.method == "POST" && path == "/v1/completions") {
    HandleCompletion(req, res, /*oai=*/true);
  } else if (req.method == "POST" && path == "/tokenize") {
    HandleTokenize(req, res);
  } else if (req.method == "GET" && path == "/" && o_.webui) {
    res.Send(200, BaseHeaders(req), "text/html; charset=utf-8",
             "<!doctype html><title>llama-server-sim</title><p>SIMULATED llama-server: no web UI.</p>\n");
  } else {
    SendError(req, res, 404, "File Not Found", "not_found_error");
  }
}

void LlamaServerSim::HandleCompletion(const HttpRequest& req, HttpResponder& res, bool oai) {
  Job job;
  job.oai = oai;
  job.number = ++request_count_;
  job.model_name = model_name_;
  Json body;
  try {
    body = Json::parse(req.body);
    const Json* prompt = nullptr;
    if (oai) {
      if (!body.is_object() || !body.contains("prompt")) throw std::runtime_error("\"prompt\" is required");
      prompt = &body.at("prompt");
    } else {
      prompt = &body.at("prompt");
    }
    if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) prompt = &(*prompt)[0];
    if (prompt->is_string()) {
      job.prompt_text = prompt->get<std::string>();
      job.prompt_tokens = Tokenize(job.prompt_text, /*add_bos=*/true);
    } else if (prompt->is_array() && !prompt->empty() &&
               std::all_of(prompt->begin(), prompt->end(), [](const Json& t) { return t.is_number_integer(); })) {
      for (const Json& t : *prompt) job.prompt_tokens.push_back(t.get<int32_t>());
      job.prompt_text = prompt->dump();
      job.prompt_is_tokens = true;
    } else {
      throw std::runtime_error("\"prompt\" must be a string or a list of tokens (the simulator serves one prompt per request)");
    }
    job.params = ReadSamplingParams(body, defaults_, oai);
  } catch (const std::exception& e) {
    // llama-server's exception wrapper: a 500 with the exception's text, logged as a warning.
    const Json error = ErrorJson(500, e.what(), "server_error");
    log_.Warn("srv    operator(): got exception: " + Dump(error));
    SendJson(req, res, 500, error);
    return;
  }
  Generate(std::move(job), req, res);
}

LlamaServerSim::Slot& LlamaServerSim::AcquireSlot(const std::vector<int32_t>& prompt, size_t* lcp_out) {
  log_.Verbose("srv  server_strea: conv_id= (empty=1)");
  std::unique_lock<std::mutex> lock(mu_);
  auto any_free = [this] {
    return std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.busy; });
  };
  if (!any_free()) {
    deferred_++;
    slot_freed_.wait(lock, any_free);
    deferred_--;
  }
  Slot* best = nullptr;
  size_t best_lcp = 0;
  double best_sim = 0.0;
  for (Slot& s : slots_) {
    if (s.busy) continue;
    if (s.tokens.empty()) {
      log_.Verbose(Format("slot get_availabl: id %2d | task -1 |  - skipping, slot is empty", s.id));
      continue;
    }
    size_t lcp = 0;
    while (lcp < s.tokens.size() && lcp < prompt.size() && s.tokens[lcp] == prompt[lcp]) lcp++;
    const double sim = prompt.empty() ? 0.0 : static_cast<double>(lcp) / static_cast<double>(prompt.size());
    if (sim > 0.1 && sim > best_sim) {
      best = &s;
      best_sim = sim;
      best_lcp = lcp;
    }
  }
  double f_keep = -1.0;
  if (best != nullptr) {
    f_keep = static_cast<double>(best_lcp) / static_cast<double>(best->tokens.size());
    log_.Info(Format("slot get_availabl: id %2d | task -1 | selected slot by LCP similarity, f_sim_best = %.3f "
                     "(> %.3f thold), f_keep = %.3f",
                     best->id, best_sim, 0.1, f_keep));
  } else {
    int64_t t_last = -1;
    for (Slot& s : slots_) {
      if (s.busy) continue;
      if (best == nullptr || s.t_last_used <= t_last) {
        best = &s;
        t_last = s.t_last_used;
      }
    }
    log_.Info(Format("slot get_availabl: id %2d | task -1 | selected slot by LRU, t_last = %lld", best->id,
                     static_cast<long long>(t_last)));
  }
  log_.Verbose("srv  get_availabl: updating prompt cache");
  log_.Verbose(Format("srv          load:  - looking for better prompt, base f_keep = %.3f, f_sim = %.3f", f_keep,
                      best_sim));
  log_.Verbose(Format("srv        update:  - cache state: 0 prompts, 0.000 MiB (limits: 8192.000 MiB, %u tokens, "
                      "8589934592 est)",
                      layout_.n_ctx));
  log_.Verbose("srv  get_availabl: prompt cache update took 0.02 ms");
  best->busy = true;
  processing_++;
  *lcp_out = best_lcp;
  return *best;
}

int LlamaServerSim::NextTaskId(int consumed) {
  std::lock_guard<std::mutex> lock(mu_);
  const int id = next_task_id_;
  next_task_id_ += consumed;
  return id;
}

int LlamaServerSim::LaunchTask(Slot& slot, const Job& job, int64_t expected_tokens) {
  const SamplingParams& p = job.params;
  log_.Verbose(Format("slot launch_slot_: id %2d | task -1 | sampler chain: logits -> ?penalties -> ?dry -> "
                      "?top-n-sigma -> top-k -> ?typical -> top-p -> min-p -> ?xtc -> temp-ext -> dist ",
                      slot.id));
  log_.Verbose(Format(
      "slot launch_slot_: id %2d | task -1 | sampler params: \n"
      "\trepeat_last_n = %d, repeat_penalty = %.3f, frequency_penalty = %.3f, presence_penalty = %.3f\n"
      "\tdry_multiplier = %.3f, dry_base = %.3f, dry_allowed_length = %d, dry_penalty_last_n = %d\n"
      "\ttop_k = %d, top_p = %.3f, min_p = %.3f, xtc_probability = %.3f, xtc_threshold = %.3f, typical_p = %.3f, "
      "top_n_sigma = %.3f, temp = %.3f\n"
      "\tmirostat = %d, mirostat_lr = %.3f, mirostat_ent = %.3f, adaptive_target = %.3f, adaptive_decay = %.3f",
      slot.id, p.repeat_last_n, p.repeat_penalty, p.frequency_penalty, p.presence_penalty, p.dry_multiplier,
      p.dry_base, p.dry_allowed_length, p.dry_penalty_last_n, p.top_k, p.top_p, p.min_p, p.xtc_probability,
      p.xtc_threshold, p.typical_p, p.top_n_sigma, p.temperature, p.mirostat, p.mirostat_eta, p.mirostat_tau,
      -1.0, 0.9));
  // Task ids advance by one per task and one per streamed partial result, as the real
  // server's queue hands them out (2, 27, 52, ... for 24-token tasks in the capture).
  const int task = NextTaskId(static_cast<int>(1 + std::max<int64_t>(0, expected_tokens)));
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot.task_id = task;
  }
  log_.Info(Format("slot launch_slot_: id %2d | task %d | processing task, is_child = 0", slot.id, task));
  if (log_.Shows(kLogVerbose)) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Slot& s : slots_) {
      if (s.busy) continue;
      log_.Verbose(Format("slot process_sing: id %2d | task -1 | saving idle slot to prompt cache", s.id));
      log_.Verbose(Format("slot prompt_clear: id %2d | task -1 | clearing prompt with %zu tokens", s.id,
                          s.tokens.size()));
    }
  }
  const size_t n = job.prompt_tokens.size();
  log_.Verbose(Format("slot   operator(): id %2d | task %d | new prompt, n_ctx_slot = %u, n_keep = %d, "
                      "task.n_tokens = %zu",
                      slot.id, task, layout_.n_ctx_seq, p.n_keep, n));
  return task;
}

void LlamaServerSim::ReleaseSlot(Slot& slot, std::vector<int32_t> tokens, int64_t n_tokens, bool truncated) {
  log_.Info(Format("slot      release: id %2d | task %d | stop processing: n_tokens = %lld, truncated = %d", slot.id,
                   slot.task_id, static_cast<long long>(n_tokens), truncated ? 1 : 0));
  bool idle = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot.tokens = std::move(tokens);
    slot.busy = false;
    slot.task_id = -1;
    slot.t_last_used = NowUs();
    processing_--;
    idle = processing_ == 0;
  }
  slot_freed_.notify_all();
  if (idle) log_.Verbose("srv  update_slots: all slots are idle");
}

double LlamaServerSim::DecodeRate() const {
  if (!layout_.offloaded()) return o_.sim_cpu_tps;
  // A partial offload: the layers on the GPU at its rate, the rest on the CPU.
  const double on_gpu = std::min(1.0, double(layout_.n_gpu_layers_used) / double(kNLayer + 1));
  return 1.0 / (on_gpu / o_.sim_gpu_tps + (1.0 - on_gpu) / o_.sim_cpu_tps);
}

double LlamaServerSim::PromptRate() const {
  return o_.sim_prompt_tps > 0 ? o_.sim_prompt_tps : 20.0 * DecodeRate();
}

double LlamaServerSim::Throttle(int64_t number) const {
  auto it = o_.sim_throttle.find(number);
  return it == o_.sim_throttle.end() ? 1.0 : it->second;
}

bool LlamaServerSim::FailsOn(FailMode mode, int64_t number) const {
  return o_.sim_fail == mode && o_.sim_fail_n == number;
}

void LlamaServerSim::Crash() {
  // What a device fault looks like from llama-server: ggml's abort message, then SIGABRT. No core
  // file: the test machines should not fill up with them.
  if (layout_.offloaded() && (layout_.gpu.name.rfind("CUDA", 0) == 0 || layout_.gpu.name.rfind("ROCm", 0) == 0)) {
    const char* api = layout_.gpu.name.rfind("CUDA", 0) == 0 ? "CUDA" : "ROCm";
    log_.Raw(Format("%s error: an illegal memory access was encountered\n"
                    "  current device: 0, in function ggml_backend_cuda_synchronize at "
                    "/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2628\n"
                    "  cudaStreamSynchronize(cuda_ctx->stream())\n"
                    "/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:90: %s error\n",
                    api, api));
  } else {
    log_.Raw("/llama.cpp/ggml/src/ggml-cpu/ops.cpp:5211: GGML_ASSERT(!isnan(x)) failed\n");
  }
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  std::abort();
}

void LlamaServerSim::HangForever() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

void LlamaServerSim::Generate(Job job, const HttpRequest& req, HttpResponder& res) {
  const SamplingParams& p = job.params;
  const int64_t n_prompt = static_cast<int64_t>(job.prompt_tokens.size());
  const int64_t n_ctx = layout_.n_ctx_seq;
  const HeaderList headers = BaseHeaders(req);

  size_t lcp = 0;
  Slot& slot = AcquireSlot(job.prompt_tokens, &lcp);

  if (n_prompt >= n_ctx) {
    const int task = LaunchTask(slot, job, 0);
    const Json error = ExceedContextJson(n_prompt, n_ctx);
    log_.Error(Format("srv    send_error: task id = %d, error: %s", task,
                      error["error"]["message"].get<std::string>().c_str()));
    log_.Warn(Format("srv          stop: cancel task, id_task = %d", task));
    ReleaseSlot(slot, {}, 0, false);
    res.Send(400, headers, kJsonType, Dump(error));
    return;
  }
  if (FailsOn(FailMode::kHttp500OnRequest, job.number)) {
    const int task = LaunchTask(slot, job, 0);
    log_.Error(Format("srv    send_error: task id = %d, error: Compute error.", task));
    ReleaseSlot(slot, {}, 0, false);
    res.Send(500, headers, kJsonType, Dump(ErrorJson(500, "Compute error.", "server_error")));
    return;
  }

  int64_t cache_n = 0;
  if (p.cache_prompt && lcp > 0) cache_n = std::min<int64_t>(static_cast<int64_t>(lcp), n_prompt - 1);
  if (FailsOn(FailMode::kCacheHitOnRequest, job.number)) cache_n = std::max<int64_t>(1, n_prompt - 1);
  const int64_t prompt_n = std::max<int64_t>(0, n_prompt - cache_n);

  // How many tokens this request may produce: n_predict, the slot's context, or (no limit) the
  // generator's natural end.
  const int64_t ctx_room = n_ctx - n_prompt;
  // --sim-output-drift: this request answers as another seed would, as a non-deterministic server.
  Generator generator(o_.sim_output_drift.contains(job.number) ? p.seed + 1 : p.seed, job.prompt_text);
  const bool unlimited = p.n_predict < 0;
  const int64_t expected = unlimited ? std::min<int64_t>(generator.natural_length() + 1, ctx_room)
                                     : std::min<int64_t>(p.n_predict, ctx_room);
  const int task = LaunchTask(slot, job, expected);
  log_.Verbose(Format("slot   operator(): id %2d | task %d | cached n_tokens = %lld, memory_seq_rm [%lld, end)", slot.id,
                      task, static_cast<long long>(cache_n), static_cast<long long>(cache_n)));
  log_.Verbose(Format("slot init_sampler: id %2d | task %d | init sampler, took 0.01 ms, tokens: text = %lld, total = %lld",
                      slot.id, task, static_cast<long long>(n_prompt), static_cast<long long>(n_prompt)));

  if (FailsOn(FailMode::kHangOnRequest, job.number)) HangForever();

  const double factor = Throttle(job.number);
  const double decode_rate = DecodeRate() * factor;
  const double prompt_rate = PromptRate() * factor;
  const bool die = FailsOn(FailMode::kDieOnRequest, job.number);
  const bool truncate = FailsOn(FailMode::kTruncatedOnRequest, job.number);
  const bool garbage = FailsOn(FailMode::kGarbageOnRequest, job.number);
  const int64_t fault_at = std::max<int64_t>(1, expected / 2);

  OaiContext oai;
  oai.created = static_cast<int64_t>(std::time(nullptr));
  {
    std::lock_guard<std::mutex> lock(mu_);
    oai.id = "chatcmpl-" + RandomAlnum(32);
  }
  oai.model = job.model_name;
  oai.system_fingerprint = BuildInfo();

  const Clock::time_point t_start = Clock::now();
  std::this_thread::sleep_until(t_start + Seconds(static_cast<double>(prompt_n) / prompt_rate));
  const Clock::time_point t_prompt_last = Clock::now();
  Clock::time_point t_gen_last = t_prompt_last;

  CompletionResult r;
  r.id_slot = slot.id;
  r.model = job.model_name;
  r.tokens_evaluated = n_prompt;
  r.params = p;
  r.prompt = job.prompt_is_tokens ? "" : DetokenizePrompt(job.prompt_text, true);
  r.stop_type = "limit";
  std::vector<int32_t> generated;
  int64_t n_gen = 0;
  bool stream_started = false;
  bool cancelled = false;

  auto begin_stream = [&]() -> bool {
    if (stream_started) return true;
    stream_started = true;
    HeaderList h = headers;
    h.emplace_back("X-Accel-Buffering", "no");
    return res.BeginChunked(200, h, "text/event-stream");
  };

  for (int64_t i = 1;; i++) {
    if (!unlimited && i > p.n_predict) break;
    if (i > ctx_room) {
      r.truncated = true;  // the slot's context is full
      break;
    }
    if (i > 1) std::this_thread::sleep_until(t_prompt_last + Seconds(static_cast<double>(i - 1) / decode_rate));
    // Only a request without a token limit ends on EOS (and not with ignore_eos).
    const Piece piece = generator.Next(/*allow_eos=*/unlimited && !p.ignore_eos);
    n_gen = i;
    t_gen_last = Clock::now();
    if (piece.id == kEosToken) {
      r.stop_type = "eos";
      break;
    }
    std::string text(piece.text);
    bool stop_word = false;
    r.content += text;
    for (const std::string& word : p.stop) {
      if (word.empty()) continue;
      const size_t at = r.content.find(word);
      if (at != std::string::npos) {
        const size_t before = r.content.size() - text.size();
        text = at > before ? text.substr(0, at - before) : "";
        r.content.resize(at);
        r.stop_type = "word";
        r.stopping_word = word;
        stop_word = true;
        break;
      }
    }
    generated.push_back(piece.id);
    if (p.stream) {
      if (!begin_stream()) {
        cancelled = true;
        break;
      }
      std::string event;
      if (garbage) {
        event = kGarbage;
      } else if (job.oai) {
        event = SseEvent(Dump(OaiChunkJson(text, nullptr, oai)));
      } else {
        event = SseEvent(Dump(CompletionChunkJson(text, piece.id, n_gen, n_prompt)));
      }
      if (truncate && i == fault_at) {
        // A chunk that announces more bytes than it carries, then the connection ends.
        res.WriteRaw(Format("%zx\r\n", event.size()) + event.substr(0, event.size() / 2));
        res.Drop();
        cancelled = true;
        break;
      }
      if (!text.empty() && !res.WriteChunk(event)) {
        cancelled = true;
        break;
      }
    } else if (res.PeerClosed()) {
      cancelled = true;  // llama-server cancels a task whose client went away
      break;
    }
    if (die && i == fault_at) Crash();
    if (stop_word) break;
  }
  if (die) Crash();  // a request that ended before the fault point still dies

  r.tokens_predicted = n_gen;
  r.has_new_line = r.content.find('\n') != std::string::npos;
  r.tokens_cached = n_gen > 0 ? n_prompt + n_gen - 1 : n_prompt;
  r.timings.cache_n = cache_n;
  r.timings.prompt_n = prompt_n;
  r.timings.prompt_us = Us(t_start, t_prompt_last);
  r.timings.predicted_n = n_gen;
  r.timings.predicted_us = n_gen > 0 ? std::max<int64_t>(1, Us(t_prompt_last, t_gen_last)) : 0;

  // print_timing as server_slot::print_timings writes it.
  const double prompt_ms = static_cast<double>(r.timings.prompt_us) / 1000.0;
  const double gen_ms = static_cast<double>(r.timings.predicted_us) / 1000.0;
  const int64_t steps = n_gen > 0 ? n_gen - 1 : 0;
  log_.Info(Format("slot print_timing: id %2d | task %d | prompt eval time = %10.2f ms / %5lld tokens (%8.2f ms per "
                   "token, %8.2f tokens per second)",
                   slot.id, task, prompt_ms, static_cast<long long>(prompt_n),
                   prompt_n > 0 ? prompt_ms / static_cast<double>(prompt_n) : 0.0,
                   prompt_ms > 0 ? 1e3 / prompt_ms * static_cast<double>(prompt_n) : 0.0));
  log_.Info(Format("slot print_timing: id %2d | task %d |        eval time = %10.2f ms / %5lld tokens (%8.2f ms per "
                   "token, %8.2f tokens per second)",
                   slot.id, task, gen_ms, static_cast<long long>(n_gen),
                   steps > 0 ? gen_ms / static_cast<double>(steps) : 0.0,
                   gen_ms > 0 ? 1e3 / gen_ms * static_cast<double>(steps) : 0.0));
  log_.Info(Format("slot print_timing: id %2d | task %d |       total time = %10.2f ms / %5lld tokens", slot.id, task,
                   prompt_ms + gen_ms, static_cast<long long>(prompt_n + n_gen)));
  int64_t reused = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    graphs_reused_ += std::max<int64_t>(0, n_gen - 2) + (first_task_ && n_gen > 1 ? 1 : 0);
    first_task_ = false;
    reused = graphs_reused_;
    totals_.prompt_tokens_total += static_cast<double>(prompt_n);
    totals_.prompt_tokens_cached_total += static_cast<double>(cache_n);
    totals_.prompt_seconds_total += prompt_ms / 1e3;
    totals_.tokens_predicted_total += static_cast<double>(n_gen);
    totals_.tokens_predicted_seconds_total += gen_ms / 1e3;
    const double decodes = static_cast<double>(n_gen > 0 ? n_gen : (prompt_n > 0 ? 1 : 0));
    totals_.n_decode_total += decodes;
    busy_slots_total_ += decodes * std::max(1, processing_);
    totals_.n_tokens_max = std::max(totals_.n_tokens_max, static_cast<double>(r.tokens_cached));
    bucket_prompt_tokens_ += static_cast<double>(prompt_n);
    bucket_prompt_ms_ += prompt_ms;
    bucket_gen_steps_ += static_cast<double>(steps);
    bucket_gen_ms_ += gen_ms;
  }
  log_.Info(Format("slot print_timing: id %2d | task %d |    graphs reused = %10lld", slot.id, task,
                   static_cast<long long>(reused)));

  std::vector<int32_t> kept = job.prompt_tokens;
  if (!generated.empty()) kept.insert(kept.end(), generated.begin(), generated.end() - 1);
  ReleaseSlot(slot, std::move(kept), r.tokens_cached, r.truncated);

  if (cancelled) {
    if (!res.committed()) res.Drop();
    return;
  }
  if (p.stream) {
    if (!begin_stream()) return;
    if (garbage) {
      res.WriteChunk(kGarbage);
    } else if (job.oai) {
      res.WriteChunk(SseEvent(Dump(OaiChunkJson("", &r, oai))));
      res.WriteChunk(SseEvent("[DONE]"));
    } else {
      CompletionResult last = r;
      last.content = "";
      res.WriteChunk(SseEvent(Dump(CompletionJson(last))));
    }
    res.EndChunked();
    return;
  }
  const std::string body = garbage ? std::string(kGarbage) : Dump(job.oai ? OaiCompletionJson(r, oai) : CompletionJson(r));
  if (truncate) {
    res.SendPrefix(200, headers, kJsonType, body, body.size() / 2);
    return;
  }
  res.Send(200, headers, kJsonType, body);
}

void LlamaServerSim::HandleMetrics(const HttpRequest& req, HttpResponder& res) {
  NextTaskId(1);
  MetricsInput m;
  {
    std::lock_guard<std::mutex> lock(mu_);
    m = totals_;
    m.prompt_tokens_seconds = bucket_prompt_ms_ > 0 ? 1e3 / bucket_prompt_ms_ * bucket_prompt_tokens_ : 0.0;
    m.predicted_tokens_seconds = bucket_gen_ms_ > 0 ? 1e3 / bucket_gen_ms_ * bucket_gen_steps_ : 0.0;
    m.requests_processing = processing_;
    m.requests_deferred = deferred_;
    m.n_busy_slots_per_decode = busy_slots_total_ / std::max(1.0, totals_.n_decode_total);
    bucket_prompt_tokens_ = bucket_prompt_ms_ = bucket_gen_steps_ = bucket_gen_ms_ = 0;
  }
  HeaderList h = BaseHeaders(req);
  h.emplace_back("Process-Start-Time-Unix", std::to_string(start_unix_));
  res.Send(200, h, "text/plain; version=0.0.4", MetricsText(m));
}

void LlamaServerSim::HandleSlots(const HttpRequest& req, HttpResponder& res) {
  NextTaskId(1);
  Json out = Json::array();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Slot& s : slots_) {
      Json j = Json::object();
      j["id"] = s.id;
      j["id_task"] = s.task_id;
      j["n_ctx"] = layout_.n_ctx_seq;
      j["speculative"] = false;
      j["is_processing"] = s.busy;
      out.push_back(j);
    }
  }
  SendJson(req, res, 200, out);
}

void LlamaServerSim::HandleModels(const HttpRequest& req, HttpResponder& res) {
  Json meta = Json::object();
  meta["vocab_type"] = 1;
  meta["n_vocab"] = kVocabSize;
  meta["n_ctx_train"] = kNCtxTrain;
  meta["n_embd"] = kNEmbd;
  meta["n_params"] = layout_.model_bytes / 2;
  meta["size"] = layout_.model_bytes;
  Json data = Json::object();
  data["id"] = model_name_;
  data["object"] = "model";
  data["created"] = static_cast<int64_t>(std::time(nullptr));
  data["owned_by"] = "llamacpp";
  data["meta"] = meta;
  Json out = Json::object();
  out["object"] = "list";
  out["data"] = Json::array({data});
  SendJson(req, res, 200, out);
}

void LlamaServerSim::HandleTokenize(const HttpRequest& req, HttpResponder& res) {
  try {
    const Json body = Json::parse(req.body);
    const bool add_special = body.value("add_special", false);
    const std::vector<int32_t> tokens = Tokenize(body.value("content", std::string()), add_special);
    SendJson(req, res, 200, Json{{"tokens", tokens}});
  } catch (const std::exception& e) {
    const Json error = ErrorJson(500, e.what(), "server_error");
    log_.Warn("srv    operator(): got exception: " + Dump(error));
    SendJson(req, res, 500, error);
  }
}

}  // namespace benchfleet::sim
