#include "tests/sim/llama_server/sim_options.h"

#include <functional>
#include <sstream>
#include <stdexcept>

namespace benchfleet::sim {
namespace {

// How a flag takes its value: always, never, or only when the next word is one of `choices`
// (`-fa` alone is the old spelling, `-fa on` the new one; both appear in the wild).
enum class Arity { kNone, kOne, kOptional };

struct Flag {
  std::vector<std::string> names;
  Arity arity;
  std::string value_name;  // for the help text
  std::string help;
  std::function<void(const std::string&, SimOptions*)> apply;
  std::vector<std::string> choices = {};  // kOptional only
};

// Throws std::invalid_argument("stoi") on garbage, like llama.cpp's own std::stoi.
int ToInt(const std::string& v) { return std::stoi(v); }
int64_t ToInt64(const std::string& v) { return std::stoll(v); }
float ToFloat(const std::string& v) { return std::stof(v); }
double ToDouble(const std::string& v) { return std::stod(v); }

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

void Ignore(const std::string&, SimOptions*) {}

// "3:0.55,4:0.53" -> {3: 0.55, 4: 0.53}.
std::map<int64_t, double> ParseThrottle(const std::string& v) {
  std::map<int64_t, double> out;
  for (const std::string& item : Split(v, ',')) {
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("expected N:FACTOR, got '" + item + "'");
    const int64_t n = std::stoll(item.substr(0, colon));
    const double f = std::stod(item.substr(colon + 1));
    if (n < 1) throw std::invalid_argument("request numbers start at 1");
    if (!(f > 0)) throw std::invalid_argument("the factor must be > 0");
    out[n] = f;
  }
  return out;
}

std::set<int64_t> ParseRequestNumbers(const std::string& v) {
  std::set<int64_t> out;
  for (const std::string& item : Split(v, ',')) {
    if (item.empty()) continue;
    const int64_t n = std::stoll(item);
    if (n < 1) throw std::invalid_argument("request numbers start at 1");
    out.insert(n);
  }
  return out;
}

bool IsKnownDevice(const std::string& d) {
  if (d == "none" || d == "Metal") return true;
  for (const char* prefix : {"CUDA", "ROCm", "Vulkan"}) {
    const std::string p = prefix;
    if (d.size() > p.size() && d.compare(0, p.size(), p) == 0 &&
        d.find_first_not_of("0123456789", p.size()) == std::string::npos) {
      return true;
    }
  }
  return false;
}

bool IsCacheType(const std::string& t) {
  for (const char* k : {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}) {
    if (t == k) return true;
  }
  return false;
}

const std::vector<Flag>& Flags() {
  static const std::vector<Flag>* flags = new std::vector<Flag>{
      // --- honoured ---
      {{"-m", "--model"}, Arity::kOne, "FNAME", "model path to load",
       [](const std::string& v, SimOptions* o) { o->model_path = v; }},
      {{"-a", "--alias"}, Arity::kOne, "STRING", "set model name aliases, comma-separated",
       [](const std::string& v, SimOptions* o) { o->aliases = Split(v, ','); }},
      {{"--host"}, Arity::kOne, "HOST", "ip address to listen (default: 127.0.0.1)",
       [](const std::string& v, SimOptions* o) { o->host = v; }},
      {{"--port"}, Arity::kOne, "PORT", "port to listen (default: 8080)",
       [](const std::string& v, SimOptions* o) { o->port = ToInt(v); }},
      {{"-c", "--ctx-size"}, Arity::kOne, "N",
       "size of the prompt context (default: 0, 0 = loaded from model: 4096)",
       [](const std::string& v, SimOptions* o) { o->ctx_size = ToInt(v); }},
      {{"-ngl", "--gpu-layers", "--n-gpu-layers"}, Arity::kOne, "N",
       "max. number of layers to store in VRAM, either an exact number, 'auto', or 'all' (default: auto)",
       [](const std::string& v, SimOptions* o) {
         o->n_gpu_layers_given = true;
         if (v == "auto") {
           o->n_gpu_layers = -1;
         } else if (v == "all") {
           o->n_gpu_layers = 999;
         } else {
           o->n_gpu_layers = ToInt(v);
         }
       }},
      {{"-dev", "--device"}, Arity::kOne, "<dev1,dev2,..>",
       "comma-separated list of devices to use for offloading (none = don't offload)",
       [](const std::string& v, SimOptions* o) {
         for (const std::string& d : Split(v, ',')) {
           if (d == "none") {
             o->device_none = true;
           } else if (d != o->sim_gpu_device || o->sim_gpu_device == "none") {
             throw std::invalid_argument("invalid device: " + d);
           }
         }
       }},
      {{"-lv", "--verbosity", "--log-verbosity"}, Arity::kOne, "N",
       "set the verbosity threshold; messages with a higher verbosity are ignored (default: 3)",
       [](const std::string& v, SimOptions* o) { o->verbosity = ToInt(v); }},
      {{"-v", "--verbose", "--log-verbose"}, Arity::kNone, "", "log everything (verbosity 5)",
       [](const std::string&, SimOptions* o) { o->verbosity = 5; }},
      {{"--metrics"}, Arity::kNone, "", "enable prometheus compatible metrics endpoint (default: disabled)",
       [](const std::string&, SimOptions* o) { o->metrics = true; }},
      {{"--slots"}, Arity::kNone, "", "expose slots monitoring endpoint (default: enabled)",
       [](const std::string&, SimOptions* o) { o->slots = true; }},
      {{"--no-slots"}, Arity::kNone, "", "disable the slots monitoring endpoint",
       [](const std::string&, SimOptions* o) { o->slots = false; }},
      {{"--props"}, Arity::kNone, "", "enable changing global properties via POST /props (default: disabled)",
       [](const std::string&, SimOptions* o) { o->props = true; }},
      {{"--no-webui"}, Arity::kNone, "", "disable the Web UI (default: enabled)",
       [](const std::string&, SimOptions* o) { o->webui = false; }},
      {{"--webui"}, Arity::kNone, "", "enable the Web UI",
       [](const std::string&, SimOptions* o) { o->webui = true; }},
      {{"-np", "--parallel"}, Arity::kOne, "N", "number of server slots (default: -1, -1 = auto)",
       [](const std::string& v, SimOptions* o) { o->n_parallel = ToInt(v); }},
      {{"-kvu", "--kv-unified"}, Arity::kNone, "", "use a single unified KV buffer for all sequences",
       [](const std::string&, SimOptions* o) { o->kv_unified = true; }},
      {{"-t", "--threads"}, Arity::kOne, "N", "number of CPU threads to use during generation (default: -1)",
       [](const std::string& v, SimOptions* o) { o->n_threads = ToInt(v); }},
      {{"--threads-http"}, Arity::kOne, "N", "number of threads used to process HTTP requests (default: -1)",
       [](const std::string& v, SimOptions* o) { o->n_threads_http = ToInt(v); }},
      {{"-b", "--batch-size"}, Arity::kOne, "N", "logical maximum batch size (default: 2048)",
       [](const std::string& v, SimOptions* o) { o->n_batch = ToInt(v); }},
      {{"-ub", "--ubatch-size"}, Arity::kOne, "N", "physical maximum batch size (default: 512)",
       [](const std::string& v, SimOptions* o) { o->n_ubatch = ToInt(v); }},
      {{"-ctk", "--cache-type-k"}, Arity::kOne, "TYPE", "KV cache data type for K (default: f16)",
       [](const std::string& v, SimOptions* o) {
         if (!IsCacheType(v)) throw std::invalid_argument("Unsupported cache type: " + v);
         o->cache_type_k = v;
       }},
      {{"-ctv", "--cache-type-v"}, Arity::kOne, "TYPE", "KV cache data type for V (default: f16)",
       [](const std::string& v, SimOptions* o) {
         if (!IsCacheType(v)) throw std::invalid_argument("Unsupported cache type: " + v);
         o->cache_type_v = v;
       }},
      {{"--api-key"}, Arity::kOne, "KEY", "API key to use for authentication (default: none)",
       [](const std::string& v, SimOptions* o) { o->api_key = v; }},
      {{"--log-file"}, Arity::kOne, "FNAME", "log to file (in addition to stderr)",
       [](const std::string& v, SimOptions* o) { o->log_file = v; }},
      {{"-s", "--seed"}, Arity::kOne, "SEED", "RNG seed (default: -1, use random seed for -1)",
       [](const std::string& v, SimOptions* o) { o->seed = ToInt64(v); }},
      {{"--temp"}, Arity::kOne, "N", "temperature (default: 0.8)",
       [](const std::string& v, SimOptions* o) { o->temperature = ToFloat(v); }},
      {{"--top-k"}, Arity::kOne, "N", "top-k sampling (default: 40)",
       [](const std::string& v, SimOptions* o) { o->top_k = ToInt(v); }},
      {{"--top-p"}, Arity::kOne, "N", "top-p sampling (default: 0.95)",
       [](const std::string& v, SimOptions* o) { o->top_p = ToFloat(v); }},
      {{"--min-p"}, Arity::kOne, "N", "min-p sampling (default: 0.05)",
       [](const std::string& v, SimOptions* o) { o->min_p = ToFloat(v); }},
      {{"-n", "--predict", "--n-predict"}, Arity::kOne, "N",
       "number of tokens to predict (default: -1, -1 = infinity)",
       [](const std::string& v, SimOptions* o) { o->n_predict = ToInt(v); }},
      {{"--mlock"}, Arity::kNone, "", "(deprecated) use --load-mode mlock",
       [](const std::string&, SimOptions* o) {
         o->deprecations.push_back("DEPRECATED: --mlock is deprecated. use --load-mode mlock instead");
       }},
      {{"--no-mmap"}, Arity::kNone, "", "(deprecated) use --load-mode none",
       [](const std::string&, SimOptions* o) {
         o->deprecations.push_back(
             "DEPRECATED: --mmap and --no-mmap are deprecated. use --load-mode mmap instead");
       }},
      // --- accepted, no effect on the simulation ---
      {{"-fa", "--flash-attn"}, Arity::kOptional, "[on|off|auto]",
       "set Flash Attention use (default: 'auto')", Ignore, {"on", "off", "auto", "1", "0"}},
      {{"-tb", "--threads-batch"}, Arity::kOne, "N", "number of threads for batch processing", Ignore},
      {{"-cb", "--cont-batching"}, Arity::kNone, "", "enable continuous batching (default: enabled)", Ignore},
      {{"-nocb", "--no-cont-batching"}, Arity::kNone, "", "disable continuous batching", Ignore},
      {{"--no-warmup"}, Arity::kNone, "", "skip warming up the model with an empty run", Ignore},
      {{"--jinja"}, Arity::kNone, "", "use jinja template for chat (default: enabled)", Ignore},
      {{"--no-jinja"}, Arity::kNone, "", "do not use jinja templates", Ignore},
      {{"-nkvo", "--no-kv-offload"}, Arity::kNone, "", "disable KV offload", Ignore},
      {{"-fit", "--fit"}, Arity::kOne, "[on|off]", "fit unset arguments to device memory (default: on)", Ignore},
      {{"-lm", "--load-mode"}, Arity::kOne, "MODE", "auto|none|mmap|mlock|mmap+mlock|dio", Ignore},
      {{"-cram", "--cache-ram"}, Arity::kOne, "N", "maximum prompt cache size in MiB", Ignore},
      {{"-sm", "--split-mode"}, Arity::kOne, "{none,layer,row}", "how to split the model across GPUs", Ignore},
      {{"-ts", "--tensor-split"}, Arity::kOne, "N0,N1,...", "fraction of the model to offload to each GPU", Ignore},
      {{"-mg", "--main-gpu"}, Arity::kOne, "INDEX", "the GPU to use for the model", Ignore},
      {{"--timeout", "-to"}, Arity::kOne, "N", "server read/write timeout in seconds (default: 600)", Ignore},
      {{"--chat-template"}, Arity::kOne, "JINJA_TEMPLATE", "set custom jinja chat template", Ignore},
      {{"--chat-template-file"}, Arity::kOne, "JINJA_FILE", "set custom jinja chat template file", Ignore},
      {{"--reasoning-format"}, Arity::kOne, "FORMAT", "controls whether thought tags are extracted", Ignore},
      {{"--reasoning-budget"}, Arity::kOne, "N", "controls the amount of thinking allowed", Ignore},
      {{"--ctx-checkpoints", "--swa-checkpoints"}, Arity::kOne, "N", "max context checkpoints per slot", Ignore},
      {{"--context-shift"}, Arity::kNone, "", "enable context shift (default: disabled)", Ignore},
      {{"--no-context-shift"}, Arity::kNone, "", "disable context shift", Ignore},
      {{"--no-perf"}, Arity::kNone, "", "disable internal libllama performance timings", Ignore},
      {{"--log-disable"}, Arity::kNone, "", "log disable", Ignore},
      {{"--log-colors"}, Arity::kOptional, "[on|off|auto]", "set colored logging", Ignore, {"on", "off", "auto"}},
      {{"--log-prefix"}, Arity::kNone, "", "enable prefix in log messages", Ignore},
      {{"--log-timestamps"}, Arity::kNone, "", "enable timestamps in log messages", Ignore},
      {{"--numa"}, Arity::kOne, "TYPE", "NUMA optimizations", Ignore},
      {{"--prio"}, Arity::kOne, "N", "process/thread priority", Ignore},
      {{"--poll"}, Arity::kOne, "<0...100>", "use polling level to wait for work", Ignore},
      {{"--spec-type"}, Arity::kOne, "TYPE", "speculative decoding type (default: none)", Ignore},
      {{"--cache-reuse"}, Arity::kOne, "N", "min chunk size to attempt reusing from the cache", Ignore},
      // --- the simulator's own ---
      {{"--sim-load-ms"}, Arity::kOne, "N",
       "SIMULATOR: time spent loading the model; /health answers 503 meanwhile (default: 300)",
       [](const std::string& v, SimOptions* o) { o->sim_load_ms = ToInt64(v); }},
      {{"--sim-gpu-tps"}, Arity::kOne, "X",
       "SIMULATOR: decode rate in tokens/s when layers are offloaded (default: 52.9)",
       [](const std::string& v, SimOptions* o) { o->sim_gpu_tps = ToDouble(v); }},
      {{"--sim-cpu-tps"}, Arity::kOne, "Y", "SIMULATOR: decode rate in tokens/s on the CPU (default: 9.6)",
       [](const std::string& v, SimOptions* o) { o->sim_cpu_tps = ToDouble(v); }},
      {{"--sim-prompt-tps"}, Arity::kOne, "Z",
       "SIMULATOR: prompt processing rate in tokens/s (default: 20 x the decode rate)",
       [](const std::string& v, SimOptions* o) { o->sim_prompt_tps = ToDouble(v); }},
      {{"--sim-throttle"}, Arity::kOne, "N:F,...",
       "SIMULATOR: the Nth generation request since start runs at F x the rates (e.g. 3:0.55,4:0.53)",
       [](const std::string& v, SimOptions* o) { o->sim_throttle = ParseThrottle(v); }},
      {{"--sim-output-drift"}, Arity::kOne, "N,...",
       "SIMULATOR: the Nth generation request since start answers what the next seed would (seed + 1):\n"
       "a server whose output is not deterministic (e.g. 3,4)",
       [](const std::string& v, SimOptions* o) { o->sim_output_drift = ParseRequestNumbers(v); }},
      {{"--sim-gpu-device"}, Arity::kOne, "NAME",
       "SIMULATOR: the GPU the build has: CUDA0, ROCm0, Vulkan0, Metal, or none for a CPU-only build "
       "(default: CUDA0)",
       [](const std::string& v, SimOptions* o) {
         if (!IsKnownDevice(v)) throw std::invalid_argument("unknown device: " + v);
         o->sim_gpu_device = v;
       }},
      {{"--sim-gpu-memory-mib"}, Arity::kOne, "N", "SIMULATOR: the GPU's total memory in MiB",
       [](const std::string& v, SimOptions* o) { o->sim_gpu_memory_mib = ToInt64(v); }},
      {{"--sim-fit-gpu-layers"}, Arity::kOne, "N",
       "SIMULATOR: with -ngl unset or auto, the fit step keeps only N layers on the GPU (a partial\n"
       "offload, as when the GPU's free memory is short; default: every layer)",
       [](const std::string& v, SimOptions* o) { o->sim_fit_gpu_layers = ToInt(v); }},
      {{"--sim-model-bytes"}, Arity::kOne, "N",
       "SIMULATOR: the model's tensor bytes, for the buffer sizes (default: 8357120)",
       [](const std::string& v, SimOptions* o) { o->sim_model_bytes = ToInt64(v); }},
      {{"--sim-fail"}, Arity::kOne, "MODE [N]",
       "SIMULATOR: exit-during-load | never-ready | die-on-request N | hang-on-request N |\n"
       "http500-on-request N | garbage-on-request N | truncated-on-request N | cache-hit-on-request N",
       nullptr},  // handled in ParseCommandLine: it may take a second word
  };
  return *flags;
}

const Flag* FindFlag(const std::string& name) {
  for (const Flag& f : Flags()) {
    for (const std::string& n : f.names) {
      if (n == name) return &f;
    }
  }
  return nullptr;
}

std::string UsageLine(const Flag& f) {
  std::string names;
  for (const std::string& n : f.names) names += (names.empty() ? "" : ", ") + n;
  std::string head = names + (f.value_name.empty() ? "" : " " + f.value_name);
  if (head.size() < 40) head.resize(40, ' ');
  std::string help;
  for (char c : f.help) help += c == '\n' ? std::string("\n") + std::string(41, ' ') : std::string(1, c);
  return head + " " + help;
}

std::string HandlerError(const std::string& arg, const std::string& what, const Flag* f) {
  return "error while handling argument \"" + arg + "\": " + what + "\n\nusage:\n" +
         (f != nullptr ? UsageLine(*f) : "") + "\n\nto show complete usage, run with -h\n";
}

}  // namespace

bool ParseFailMode(const std::string& name, FailMode* mode, bool* needs_n) {
  static const std::map<std::string, std::pair<FailMode, bool>> kModes = {
      {"exit-during-load", {FailMode::kExitDuringLoad, false}},
      {"never-ready", {FailMode::kNeverReady, false}},
      {"die-on-request", {FailMode::kDieOnRequest, true}},
      {"hang-on-request", {FailMode::kHangOnRequest, true}},
      {"http500-on-request", {FailMode::kHttp500OnRequest, true}},
      {"garbage-on-request", {FailMode::kGarbageOnRequest, true}},
      {"truncated-on-request", {FailMode::kTruncatedOnRequest, true}},
      {"cache-hit-on-request", {FailMode::kCacheHitOnRequest, true}},
  };
  auto it = kModes.find(name);
  if (it == kModes.end()) return false;
  *mode = it->second.first;
  *needs_n = it->second.second;
  return true;
}

std::string HelpText() {
  std::string out =
      "llama-server-sim: a SIMULATED llama.cpp llama-server (benchfleet tests/sim).\n"
      "It speaks llama-server's HTTP protocol and command line; no model is run.\n\n"
      "usage: llama-server-sim -m FNAME [options]\n\n"
      "----- llama-server options (honoured or accepted) -----\n\n";
  bool sim_header = false;
  for (const Flag& f : Flags()) {
    if (!sim_header && f.names[0].rfind("--sim-", 0) == 0) {
      out += "\n----- simulator controls (not llama-server flags) -----\n\n";
      sim_header = true;
    }
    out += UsageLine(f) + "\n";
  }
  out +=
      "\n-h, --help                               print this help and exit\n"
      "--version                                print the version and exit\n"
      "--list-devices                           print the available devices and exit\n";
  return out;
}

ParseResult ParseCommandLine(int argc, const char* const* argv, SimOptions* options) {
  ParseResult result;
  // --sim-gpu-device decides which -dev names exist: apply it first, wherever it is.
  for (int i = 1; i + 1 < argc; i++) {
    if (std::string(argv[i]) == "--sim-gpu-device") {
      const std::string v = argv[i + 1];
      if (IsKnownDevice(v)) options->sim_gpu_device = v;
    }
  }
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "--usage") {
      result.outcome = ParseOutcome::kExitOk;
      result.stdout_text = HelpText();
      return result;
    }
    if (arg == "--version") {
      result.outcome = ParseOutcome::kExitOk;
      result.version = true;
      return result;
    }
    if (arg == "--list-devices") {
      result.outcome = ParseOutcome::kExitOk;
      result.list_devices = true;
      return result;
    }
    const Flag* flag = FindFlag(arg);
    if (flag == nullptr) {
      result.outcome = ParseOutcome::kExitError;
      result.stderr_text = "error: invalid argument: " + arg + "\n";
      return result;
    }
    try {
      if (arg == "--sim-fail") {
        if (i + 1 >= argc) throw std::invalid_argument("expected value for argument");
        std::string mode_name = argv[++i];
        std::string n_text;
        for (char sep : {':', '='}) {
          const size_t at = mode_name.find(sep);
          if (at != std::string::npos) {
            n_text = mode_name.substr(at + 1);
            mode_name = mode_name.substr(0, at);
          }
        }
        FailMode mode;
        bool needs_n = false;
        if (!ParseFailMode(mode_name, &mode, &needs_n)) {
          throw std::invalid_argument("unknown failure mode: " + mode_name);
        }
        if (needs_n && n_text.empty()) {
          if (i + 1 >= argc) throw std::invalid_argument(mode_name + " needs a request number N");
          n_text = argv[++i];
        }
        options->sim_fail = mode;
        options->sim_fail_n = needs_n ? ToInt64(n_text) : 0;
        if (needs_n && options->sim_fail_n < 1) {
          throw std::invalid_argument("request numbers start at 1");
        }
        continue;
      }
      std::string value;
      if (flag->arity == Arity::kOne) {
        if (i + 1 >= argc) throw std::invalid_argument("expected value for argument");
        value = argv[++i];
      } else if (flag->arity == Arity::kOptional && i + 1 < argc) {
        for (const std::string& c : flag->choices) {
          if (c == argv[i + 1]) value = argv[++i];
        }
      }
      flag->apply(value, options);
    } catch (const std::exception& e) {
      result.outcome = ParseOutcome::kExitError;
      result.stderr_text = HandlerError(arg, e.what(), flag);
      return result;
    }
  }
  if (options->model_path.empty()) {
    // llama-server without -m would start its router mode; the simulator only simulates one
    // model, so it says so instead of pretending.
    result.outcome = ParseOutcome::kExitError;
    result.stderr_text =
        "error: llama-server-sim needs -m FNAME (the router mode of llama-server is not simulated)\n";
  }
  return result;
}

}  // namespace benchfleet::sim
