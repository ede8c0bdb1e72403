#include "tests/sim/comfyui/comfyui_sim.h"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <set>
#include <thread>

#include "tests/sim/comfyui/png.h"

namespace benchfleet::sim::comfyui {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string HttpDate() {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

// Writes a response the way aiohttp 3.8 does: Content-Type, Content-Length, Date, Server (the
// captures' order), keep-alive without a Connection header.
void Reply(HttpResponder& res, int status, const std::string& content_type, const std::string& body,
           const HeaderList& extra = {}) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + StatusReason(status) + "\r\n";
  for (const auto& [k, v] : extra) head += k + ": " + v + "\r\n";
  head += "Content-Type: " + content_type + "\r\n";
  head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  head += "Date: " + HttpDate() + "\r\n";
  head += "Server: Python/3.11 aiohttp/3.8.4\r\n\r\n";
  res.WriteRaw(head + body);
}

void ReplyJson(HttpResponder& res, int status, const Json& body) {
  Reply(res, status, "application/json; charset=utf-8", PyDumps(body));
}

void NotFound(HttpResponder& res) { Reply(res, 404, "text/plain; charset=utf-8", "404: Not Found"); }

std::string UrlDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> Query(const std::string& target) {
  std::map<std::string, std::string> q;
  const size_t qm = target.find('?');
  if (qm == std::string::npos) return q;
  std::string rest = target.substr(qm + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t amp = rest.find('&', pos);
    if (amp == std::string::npos) amp = rest.size();
    const std::string kv = rest.substr(pos, amp - pos);
    const size_t eq = kv.find('=');
    if (!kv.empty()) q[UrlDecode(kv.substr(0, eq))] = eq == std::string::npos ? "" : UrlDecode(kv.substr(eq + 1));
    pos = amp + 1;
  }
  return q;
}

std::string Uuid4() {
  static std::mutex mu;
  static std::mt19937_64 rng(std::random_device{}());
  std::lock_guard<std::mutex> lock(mu);
  const uint64_t a = rng(), b = rng();
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFF),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3FFF)),
                static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFull));
  return buf;
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The traceback frames of the captured run-time error (run8), which every simulated run-time
// error reuses; the last frame names the failing node's code.
const char* const kTracebackHead[] = {
    "  File \"COMFYUI_ROOT/execution.py\", line 496, in execute\n    output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data(prompt_id, unique_id, obj, input_data_all, execution_block_cb=execution_block_cb, pre_execute_cb=pre_execute_cb, hidden_inputs=hidden_inputs)\n                                                              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
    "  File \"COMFYUI_ROOT/execution.py\", line 315, in get_output_data\n    return_values = await _async_map_node_over_list(prompt_id, unique_id, obj, input_data_all, obj.FUNCTION, allow_interrupt=True, execution_block_cb=execution_block_cb, pre_execute_cb=pre_execute_cb, hidden_inputs=hidden_inputs)\n                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
    "  File \"COMFYUI_ROOT/execution.py\", line 289, in _async_map_node_over_list\n    await process_inputs(input_dict, i)\n",
    "  File \"COMFYUI_ROOT/execution.py\", line 277, in process_inputs\n    result = f(**inputs)\n             ^^^^^^^^^^^\n",
};
const char* const kBlurFrames[] = {
    "  File \"COMFYUI_ROOT/comfy_api/internal/__init__.py\", line 149, in wrapped_func\n    return method(locked_class, **inputs)\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
    "  File \"COMFYUI_ROOT/comfy_api/latest/_io.py\", line 1270, in EXECUTE_NORMALIZED\n    to_return = cls.execute(*args, **kwargs)\n                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
    "  File \"COMFYUI_ROOT/comfy_extras/nodes_post_processing.py\", line 98, in execute\n    padded_image = F.pad(image, (blur_radius,blur_radius,blur_radius,blur_radius), 'reflect')\n                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
};
const char* const kSamplerFrame =
    "  File \"COMFYUI_ROOT/nodes.py\", line 1525, in sample\n    return common_ksampler(model, seed, steps, cfg, sampler_name, scheduler, positive, negative, latent_image, denoise=denoise)\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n";

Json ProgressNode(const std::string& id, const std::string& prompt_id, Json value, Json max, const char* state) {
  Json n;
  n["value"] = std::move(value);
  n["max"] = std::move(max);
  n["state"] = state;
  n["node_id"] = id;
  n["prompt_id"] = prompt_id;
  n["display_node_id"] = id;
  n["parent_node_id"] = nullptr;
  n["real_node_id"] = id;
  return n;
}

}  // namespace

std::string ParseOptions(int argc, char** argv, Options* o) {
  std::vector<std::string> bad;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    std::string val;
    const size_t eq = a.find('=');
    bool has_inline = false;
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      val = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_inline = true;
    }
    auto next = [&](std::string* out) -> bool {
      if (has_inline) {
        *out = val;
        return true;
      }
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    auto int_arg = [&](int* out) -> bool {
      std::string s;
      if (!next(&s)) return false;
      char* end = nullptr;
      const long v = std::strtol(s.c_str(), &end, 10);
      if (end == s.c_str() || *end != '\0' || v < 0) return false;
      *out = static_cast<int>(v);
      return true;
    };
    if (a == "--listen") {
      if (!next(&o->listen)) return "argument --listen: expected one argument";
    } else if (a == "--port") {
      if (!int_arg(&o->port)) return "argument --port: invalid int value";
    } else if (a == "--sim-step-ms") {
      if (!int_arg(&o->step_ms)) return "argument --sim-step-ms: invalid int value";
    } else if (a == "--sim-node-ms") {
      if (!int_arg(&o->node_ms)) return "argument --sim-node-ms: invalid int value";
    } else if (a == "--sim-free-lag-ms") {
      if (!int_arg(&o->free_lag_ms)) return "argument --sim-free-lag-ms: invalid int value";
    } else if (a == "--sim-max-steps") {
      if (!int_arg(&o->max_steps)) return "argument --sim-max-steps: invalid int value";
    } else if (a == "--sim-free-lag") {
      o->free_lag = true;
    } else if (a == "--no-sim-free-lag") {
      o->free_lag = false;
    } else if (a == "--sim-device") {
      if (!next(&o->device) || (o->device != "cpu" && o->device != "cuda")) {
        return "argument --sim-device: invalid choice (choose from 'cpu', 'cuda')";
      }
    } else if (a == "--sim-checkpoints") {
      std::string s;
      if (!next(&s)) return "argument --sim-checkpoints: expected one argument";
      o->checkpoints.clear();
      size_t pos = 0;
      while (pos < s.size()) {
        size_t c = s.find(',', pos);
        if (c == std::string::npos) c = s.size();
        if (c > pos) o->checkpoints.push_back(s.substr(pos, c - pos));
        pos = c + 1;
      }
    } else if (a == "--cache-none" || a == "--cache-classic") {
      // ComfyUI's own flags (comfy/cli_args.py); --cache-none: every node re-executes, and
      // execution_cached lists no node (caching.py's NullCache.get returns None).
      o->cache = a == "--cache-none" ? "none" : "classic";
    } else if (a == "--cache-lru") {
      std::string s;
      if (!next(&s) || std::atoi(s.c_str()) <= 0) return "argument --cache-lru: invalid int value";
      o->cache = "lru";
      o->lru_size = std::atoi(s.c_str());
    } else if (a == "--sim-cache") {
      std::string s;
      if (!next(&s)) return "argument --sim-cache: expected one argument";
      if (s == "classic" || s == "none") {
        o->cache = s;
      } else if (s.rfind("lru:", 0) == 0 && std::atoi(s.c_str() + 4) > 0) {
        o->cache = "lru";
        o->lru_size = std::atoi(s.c_str() + 4);
      } else {
        return "argument --sim-cache: invalid choice: '" + s + "' (classic, lru:N, none)";
      }
    } else if (a == "--sim-fail") {
      std::string s;
      if (!next(&s)) return "argument --sim-fail: expected one argument";
      const size_t colon = s.find(':');
      std::string mode = s.substr(0, colon);
      if (mode == "hang-on-prompt") {
        std::string n;
        if (colon != std::string::npos) {
          n = s.substr(colon + 1);
        } else if (i + 1 < argc) {
          n = argv[++i];
        }
        o->fail_n = std::atoi(n.c_str());
        if (o->fail_n <= 0) return "argument --sim-fail: hang-on-prompt needs N >= 1";
      } else if (mode != "no-websocket" && mode != "garbage-history" && mode != "missing-image") {
        return "argument --sim-fail: invalid choice: '" + s + "'";
      }
      o->fail_mode = mode;
    } else {
      bad.push_back(argv[i]);
    }
  }
  if (!bad.empty()) {
    std::string s = "unrecognized arguments:";
    for (const auto& b : bad) s += " " + b;
    return s;
  }
  return "";
}

ComfyUiSim::ComfyUiSim(Options options, std::vector<std::string> argv)
    : options_(std::move(options)), argv_(std::move(argv)), table_(options_.checkpoints) {}

ComfyUiSim::~ComfyUiSim() = default;

void ComfyUiSim::Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mu_);
  const std::string s = line + "\n";
  std::fwrite(s.data(), 1, s.size(), stderr);
  std::fflush(stderr);
}

void ComfyUiSim::StartWorker() {
  std::thread([this] { Worker(); }).detach();
}

Json ComfyUiSim::StatusData() const {
  const int64_t remaining = static_cast<int64_t>(pending_.size()) + (running_ ? 1 : 0);
  return {{"status", {{"exec_info", {{"queue_remaining", remaining}}}}}};
}

void ComfyUiSim::Send(const std::string& client_id, const std::string& type, const Json& data) {
  auto it = sockets_.find(client_id);
  if (it == sockets_.end()) return;
  it->second->SendText(PyDumps(Json{{"type", type}, {"data", data}}));
}

void ComfyUiSim::Broadcast(const std::string& type, const Json& data) {
  const std::string text = PyDumps(Json{{"type", type}, {"data", data}});
  for (auto& [sid, ws] : sockets_) ws->SendText(text);
}

Json ComfyUiSim::QueueEntry(const QueueItem& item) const {
  return Json::array({item.number, item.prompt_id, item.prompt, item.extra_data, Json(item.outputs)});
}

void ComfyUiSim::ApplyFree() {
  free_pending_ = false;
  cache_.clear();
}

void ComfyUiSim::Worker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (pending_.empty()) {
      if (free_pending_) {
        // ComfyUI's worker sees /free's flags only when its queue wait ends; the free-lag window
        // is that wait (a prompt arriving first runs against the old cache).
        if (Clock::now() >= free_deadline_) {
          ApplyFree();
          continue;
        }
        wake_.wait_until(lock, free_deadline_);
      } else {
        wake_.wait(lock);
      }
      continue;
    }
    running_ = std::make_unique<QueueItem>(std::move(pending_.front()));
    pending_.pop_front();
    interrupt_ = false;
    const QueueItem item = *running_;
    Execute(item, lock);
    running_.reset();
    Broadcast("status", StatusData());
    Send(item.client_id, "executing", Json{{"node", nullptr}, {"prompt_id", item.prompt_id}});
    if (free_pending_) ApplyFree();
  }
}

void ComfyUiSim::Execute(const QueueItem& item, std::unique_lock<std::mutex>& lock) {
  const auto start = Clock::now();
  executed_prompts_++;
  const bool hang = options_.fail_mode == "hang-on-prompt" && executed_prompts_ == options_.fail_n;
  generation_++;
  const Json& prompt = item.prompt;
  const std::string& pid = item.prompt_id;
  Broadcast("status", StatusData());

  // Execution order: depth-first from each output, inputs before the node (1, 2, 3, 5, 4).
  std::vector<std::string> order;
  std::set<std::string> seen;
  std::function<void(const std::string&)> visit = [&](const std::string& id) {
    if (!seen.insert(id).second) return;
    const Json& inputs = prompt[id]["inputs"];
    for (auto it = inputs.begin(); it != inputs.end(); ++it) {
      if (it.value().is_array() && it.value().size() == 2 && it.value()[0].is_string()) {
        visit(it.value()[0].get<std::string>());
      }
    }
    order.push_back(id);
  };
  for (const std::string& out : item.outputs) visit(out);

  // Signatures: class, literal inputs, and the upstream signatures (what ComfyUI's cache keys on).
  std::map<std::string, std::string> sig;
  for (const std::string& id : order) {
    std::string s = prompt[id]["class_type"].get<std::string>() + "(";
    const Json& inputs = prompt[id]["inputs"];
    std::map<std::string, std::string> sorted;
    for (auto it = inputs.begin(); it != inputs.end(); ++it) {
      const Json& v = it.value();
      if (v.is_array() && v.size() == 2 && v[0].is_string()) {
        sorted[it.key()] = "<" + sig[v[0].get<std::string>()] + "#" + v[1].dump() + ">";
      } else {
        sorted[it.key()] = v.dump();
      }
    }
    for (const auto& [k, v] : sorted) s += k + "=" + v + ",";
    sig[id] = s + ")";
  }
  auto cache_key = [&](const std::string& id) {
    return options_.cache == "classic" ? id + "|" + sig[id] : sig[id];
  };

  Json messages = Json::array();
  auto record = [&](const std::string& type, const Json& data) {
    messages.push_back(Json::array({type, data}));
    Send(item.client_id, type, data);
  };
  record("execution_start", Json{{"prompt_id", pid}, {"timestamp", NowMs()}});
  std::vector<std::string> cached_ids;
  if (options_.cache != "none") {
    for (const std::string& id : order) {
      if (cache_.count(cache_key(id))) cached_ids.push_back(id);
    }
  }
  record("execution_cached", Json{{"nodes", cached_ids}, {"prompt_id", pid}, {"timestamp", NowMs()}});

  std::map<std::string, CachedNode> results;
  Json outputs = Json::object();
  Json meta = Json::object();
  Json progress = Json::object();
  std::vector<std::string> executed;
  std::string status_str = "success";
  auto send_progress = [&] { Send(item.client_id, "progress_state", Json{{"prompt_id", pid}, {"nodes", progress}}); };
  auto link_of = [&](const std::string& id, const char* input) -> const CachedNode* {
    const Json& v = prompt[id]["inputs"][input];
    return &results[v[0].get<std::string>()];
  };
  auto sleep_ms = [&](int64_t ms) {
    if (ms <= 0) return;
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    lock.lock();
  };
  auto add_meta = [&](const std::string& id) {
    meta[id] = Json{{"node_id", id}, {"display_node", id}, {"parent_node", nullptr}, {"real_node_id", id}};
  };

  bool failed = false;
  for (const std::string& id : order) {
    const std::string cls = prompt[id]["class_type"].get<std::string>();
    const Json& in = prompt[id]["inputs"];
    const bool is_output = table_.Find(cls)->output_node;
    if (std::find(cached_ids.begin(), cached_ids.end(), id) != cached_ids.end()) {
      results[id] = cache_[cache_key(id)];
      results[id].generation = generation_;
      executed.push_back(id);
      if (is_output) {
        // A cached output node replays its UI output, then reports itself finished (ints, as captured).
        record("executed", Json{{"node", id}, {"display_node", id}, {"output", results[id].ui}, {"prompt_id", pid}});
        messages.erase(messages.end() - 1);  // history keeps only the execution_* messages
        outputs[id] = results[id].ui;
        add_meta(id);
        progress[id] = ProgressNode(id, pid, 1, 1, "finished");
        send_progress();
      }
      continue;
    }
    progress[id] = ProgressNode(id, pid, 0.0, 1.0, "running");
    send_progress();
    Send(item.client_id, "executing", Json{{"node", id}, {"display_node", id}, {"prompt_id", pid}});
    if (hang) {
      Log("comfyui-sim: --sim-fail hang-on-prompt: prompt " + pid + " hangs in node " + id);
      for (;;) wake_.wait(lock);
    }

    CachedNode r;
    r.value = Fnv1a(sig[id]);
    r.generation = generation_;
    std::string error_message, error_type = "RuntimeError";
    std::vector<std::string> frames;
    int64_t node_ms = options_.node_ms;
    if (cls == "EmptyImage" || cls == "EmptyLatentImage") {
      r.width = in["width"].get<int>();
      r.height = in["height"].get<int>();
    } else if (cls == "ImageAddNoise") {
      r.width = link_of(id, "image")->width;
      r.height = link_of(id, "image")->height;
    } else if (cls == "ImageScale") {
      const CachedNode* up = link_of(id, "image");
      r.width = in["width"].get<int>() ? in["width"].get<int>() : up->width;
      r.height = in["height"].get<int>() ? in["height"].get<int>() : up->height;
      // Upscaling to a large size is the slow node of the capture graph (0.1 s of 0.13 s).
      if (static_cast<int64_t>(r.width) * r.height > 1024 * 1024) node_ms *= 10;
    } else if (cls == "ImageBlur") {
      const CachedNode* up = link_of(id, "image");
      r.width = up->width;
      r.height = up->height;
      const int radius = in["blur_radius"].get<int>();
      if (radius >= std::min(up->width, up->height)) {
        error_message = "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (" +
                        std::to_string(radius) + ", " + std::to_string(radius) + ") at dimension 3 of input 4\n";
        for (const char* f : kTracebackHead) frames.push_back(f);
        for (const char* f : kBlurFrames) frames.push_back(f);
      }
    } else if (cls == "KSampler") {
      const CachedNode* up = link_of(id, "latent_image");
      r.width = up->width;
      r.height = up->height;
      const int steps = in["steps"].get<int>();
      if (steps > options_.max_steps) {
        error_message = "SIMULATED: KSampler steps " + std::to_string(steps) + " exceed --sim-max-steps " +
                        std::to_string(options_.max_steps) + "\n";
        for (const char* f : kTracebackHead) frames.push_back(f);
        frames.push_back(kSamplerFrame);
      } else {
        for (int s = 1; s <= steps; s++) {
          sleep_ms(options_.step_ms);
          if (interrupt_) break;
          progress[id] = ProgressNode(id, pid, s, steps, "running");
          send_progress();
          Send(item.client_id, "progress", Json{{"value", s}, {"max", steps}, {"prompt_id", pid}, {"node", id}});
        }
        node_ms = 0;
      }
    } else if (cls == "VAEDecode") {
      r.width = 64;
      r.height = 64;
    } else if (cls == "SaveImage") {
      const CachedNode* up = link_of(id, "images");
      std::string prefix = in["filename_prefix"].get<std::string>();
      std::string subfolder;
      const size_t slash = prefix.rfind('/');
      if (slash != std::string::npos) {
        subfolder = prefix.substr(0, slash);
        prefix = prefix.substr(slash + 1);
      }
      int counter = 1;
      const std::string dir = subfolder.empty() ? "" : subfolder + "/";
      for (const auto& [path, bytes] : files_) {
        if (path.rfind(dir + prefix + "_", 0) != 0) continue;
        const std::string rest = path.substr(dir.size() + prefix.size() + 1);
        if (rest.size() == 10 && rest.substr(5) == "_.png") counter = std::max(counter, std::atoi(rest.c_str()) + 1);
      }
      char name[32];
      std::snprintf(name, sizeof(name), "_%05d_.png", counter);
      const std::string filename = prefix + name;
      const int w = std::clamp(up->width, 1, 512), h = std::clamp(up->height, 1, 512);
      files_[dir + filename] = MakePng(w, h, up->value);
      r.ui = Json{{"images", Json::array({Json{{"filename", filename}, {"subfolder", subfolder}, {"type", "output"}}})}};
    }
    if (error_message.empty()) sleep_ms(node_ms);

    if (interrupt_) {
      record("execution_interrupted", Json{{"prompt_id", pid}, {"node_id", id}, {"node_type", cls},
                                           {"executed", executed}, {"timestamp", NowMs()}});
      Log("Processing interrupted");
      status_str = "error";
      failed = true;
      break;
    }
    if (!error_message.empty()) {
      Json current_inputs = Json::object();
      for (auto it = in.begin(); it != in.end(); ++it) {
        const Json& v = it.value();
        if (v.is_array()) {
          current_inputs[it.key()] = Json::array({"tensor(SIMULATED)"});
        } else {
          current_inputs[it.key()] = Json::array({v});
        }
      }
      std::vector<std::string> all_ids;
      for (auto it = prompt.begin(); it != prompt.end(); ++it) all_ids.push_back(it.key());
      Json data;
      data["prompt_id"] = pid;
      data["node_id"] = id;
      data["node_type"] = cls;
      data["executed"] = executed;
      data["exception_message"] = error_message;
      data["exception_type"] = error_type;
      data["traceback"] = frames;
      data["current_inputs"] = current_inputs;
      data["current_outputs"] = all_ids;
      data["timestamp"] = NowMs();
      std::string msg = error_message;
      if (!msg.empty() && msg.back() == '\n') msg.pop_back();
      Log("!!! Exception during processing !!! " + msg);
      Log("Traceback (most recent call last):");
      std::string tb;
      for (const auto& f : frames) tb += f;
      tb += error_type + ": " + error_message;
      Log(tb);
      record("execution_error", data);
      status_str = "error";
      failed = true;
      break;
    }
    results[id] = r;
    executed.push_back(id);
    if (is_output) {
      Send(item.client_id, "executed", Json{{"node", id}, {"display_node", id}, {"output", r.ui}, {"prompt_id", pid}});
      outputs[id] = r.ui;
      add_meta(id);
    }
    progress[id] = ProgressNode(id, pid, 1.0, 1.0, "finished");
    send_progress();
  }

  if (!failed) record("execution_success", Json{{"prompt_id", pid}, {"timestamp", NowMs()}});

  // The cache keeps what this prompt produced: classic only this prompt's nodes, lru:N the
  // results used in the last N prompts, none nothing.
  if (options_.cache == "classic") {
    cache_.clear();
    for (const auto& [id, r] : results) cache_[cache_key(id)] = r;
  } else if (options_.cache == "lru") {
    for (const auto& [id, r] : results) cache_[cache_key(id)] = r;
    for (auto it = cache_.begin(); it != cache_.end();) {
      it = it->second.generation <= generation_ - options_.lru_size ? cache_.erase(it) : std::next(it);
    }
  }

  Json entry;
  entry["prompt"] = QueueEntry(item);
  entry["outputs"] = outputs;
  entry["status"] = Json{{"status_str", status_str}, {"completed", !failed}, {"messages", messages}};
  entry["meta"] = meta;
  history_.emplace_back(pid, entry);
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  char buf[64];
  std::snprintf(buf, sizeof(buf), "Prompt executed in %.2f seconds", secs);
  Log(buf);
}

void ComfyUiSim::PostPrompt(const HttpRequest& req, HttpResponder& res) {
  Log("got prompt");
  Json body;
  try {
    body = Json::parse(req.body);
  } catch (const std::exception&) {
    body = Json();
  }
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t number = next_number_++;
  if (!body.is_object() || !body.contains("prompt")) {
    lock.unlock();
    const Json err = {{"error", {{"type", "no_prompt"}, {"message", "No prompt provided"}, {"details", "No prompt provided"},
                                 {"extra_info", Json::object()}}},
                      {"node_errors", Json::object()}};
    ReplyJson(res, 400, err);
    return;
  }
  Validation v = ValidatePrompt(table_, body["prompt"]);
  if (!v.ok) {
    lock.unlock();
    for (const auto& l : v.log) Log(l);
    ReplyJson(res, 400, v.body);
    return;
  }
  QueueItem item;
  item.number = number;
  item.prompt_id = body.contains("prompt_id") && body["prompt_id"].is_string() ? body["prompt_id"].get<std::string>() : Uuid4();
  item.prompt = v.prompt;
  item.extra_data = body.contains("extra_data") && body["extra_data"].is_object() ? body["extra_data"] : Json::object();
  if (body.contains("client_id") && body["client_id"].is_string()) {
    item.client_id = body["client_id"].get<std::string>();
    item.extra_data["client_id"] = item.client_id;
  }
  item.outputs = v.outputs;
  const std::string pid = item.prompt_id;
  pending_.push_back(std::move(item));
  Broadcast("status", StatusData());
  wake_.notify_all();
  lock.unlock();
  ReplyJson(res, 200, Json{{"prompt_id", pid}, {"number", number}, {"node_errors", Json::object()}});
}

void ComfyUiSim::GetHistory(const std::string& id, HttpResponder& res) {
  if (options_.fail_mode == "garbage-history") {
    Reply(res, 200, "application/json; charset=utf-8", "comfyui-sim garbage-history: \x01\x02 not JSON }{");
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  Json out = Json::object();
  for (const auto& [pid, entry] : history_) {
    if (id.empty() || pid == id) out[pid] = entry;
  }
  ReplyJson(res, 200, out);
}

void ComfyUiSim::GetView(const HttpRequest& req, HttpResponder& res) {
  auto q = Query(req.target);
  const std::string filename = q["filename"];
  const std::string subfolder = q["subfolder"];
  const std::string type = q.count("type") ? q["type"] : "output";
  std::string bytes;
  bool found = false;
  if (type == "output" && options_.fail_mode != "missing-image" && filename.find('/') == std::string::npos) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find((subfolder.empty() ? "" : subfolder + "/") + filename);
    if (it != files_.end()) {
      bytes = it->second;
      found = true;
    }
  }
  if (!found) {
    Reply(res, 404, "application/octet-stream", "");
    return;
  }
  Reply(res, 200, "image/png", bytes, {{"Content-Disposition", "filename=\"" + filename + "\""}});
}

void ComfyUiSim::WebSocketSession(const HttpRequest& req, HttpResponder& res) {
  const std::string key = req.Header("Sec-WebSocket-Key");
  if (key.empty()) {
    Reply(res, 400, "text/plain; charset=utf-8", "400: Bad Request");
    return;
  }
  auto q = Query(req.target);
  std::string sid = q["clientId"];
  if (sid.empty()) {
    sid = Uuid4();
    sid.erase(std::remove(sid.begin(), sid.end(), '-'), sid.end());
  }
  res.WriteRaw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: " +
               WebSocketAccept(key) + "\r\nDate: " + HttpDate() + "\r\nServer: Python/3.11 aiohttp/3.8.4\r\n\r\n");
  auto ws = std::make_shared<WebSocket>(res.fd());
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sockets_.find(sid);
    if (it != sockets_.end()) it->second->Close();
    sockets_[sid] = ws;
    Json data = StatusData();
    data["sid"] = sid;
    ws->SendText(PyDumps(Json{{"type", "status"}, {"data", data}}));
  }
  ws->ReadUntilClosed();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sockets_.find(sid);
    if (it != sockets_.end() && it->second == ws) sockets_.erase(it);
  }
  res.Drop();
}

void ComfyUiSim::Handle(const HttpRequest& req, HttpResponder& res) {
  std::string path = req.path;
  if (path.rfind("/api/", 0) == 0) path = path.substr(4);
  const std::string& m = req.method;
  if (path == "/ws" && m == "GET") {
    if (options_.fail_mode == "no-websocket") {
      NotFound(res);
      return;
    }
    WebSocketSession(req, res);
    return;
  }
  if (path == "/prompt" && m == "POST") {
    PostPrompt(req, res);
  } else if (path == "/prompt" && m == "GET") {
    std::lock_guard<std::mutex> lock(mu_);
    ReplyJson(res, 200, Json{{"exec_info", StatusData()["status"]["exec_info"]}});
  } else if (path == "/history" && m == "GET") {
    GetHistory("", res);
  } else if (path.rfind("/history/", 0) == 0 && m == "GET") {
    GetHistory(UrlDecode(path.substr(9)), res);
  } else if (path == "/object_info" && m == "GET") {
    ReplyJson(res, 200, table_.ObjectInfo(""));
  } else if (path.rfind("/object_info/", 0) == 0 && m == "GET") {
    const std::string name = UrlDecode(path.substr(13));
    ReplyJson(res, 200, name.empty() ? Json::object() : table_.ObjectInfo(name));
  } else if (path == "/view" && m == "GET") {
    GetView(req, res);
  } else if (path == "/queue" && m == "GET") {
    std::lock_guard<std::mutex> lock(mu_);
    Json running = Json::array();
    if (running_) running.push_back(QueueEntry(*running_));
    Json pending = Json::array();
    for (const auto& p : pending_) pending.push_back(QueueEntry(p));
    ReplyJson(res, 200, Json{{"queue_running", running}, {"queue_pending", pending}});
  } else if (path == "/free" && m == "POST") {
    Json body;
    try {
      body = Json::parse(req.body);
    } catch (const std::exception&) {
      body = Json::object();
    }
    const bool free_memory = body.is_object() && body.value("free_memory", false);
    const bool unload = body.is_object() && body.value("unload_models", false);
    if (free_memory || unload) {
      std::lock_guard<std::mutex> lock(mu_);
      // unload_models alone keeps the execution cache (ComfyUI: only free_memory resets it).
      if (free_memory) {
        free_pending_ = true;
        free_deadline_ = Clock::now() + std::chrono::milliseconds(options_.free_lag ? options_.free_lag_ms : 0);
        wake_.notify_all();
      }
    }
    Reply(res, 200, "application/octet-stream", "");
  } else if (path == "/interrupt" && m == "POST") {
    Json body;
    try {
      body = Json::parse(req.body);
    } catch (const std::exception&) {
      body = Json::object();
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (body.is_object() && body.contains("prompt_id") && body["prompt_id"].is_string()) {
      const std::string id = body["prompt_id"].get<std::string>();
      if (running_ && running_->prompt_id == id) {
        Log("Interrupting prompt " + id);
        interrupt_ = true;
      } else {
        Log("Prompt " + id + " is not currently running, skipping interrupt");
      }
    } else {
      Log("Global interrupt (no prompt_id specified)");
      if (running_) interrupt_ = true;
    }
    Reply(res, 200, "application/octet-stream", "");
  } else if (path == "/system_stats" && m == "GET") {
    struct sysinfo si {};
    ::sysinfo(&si);
    const int64_t ram_total = static_cast<int64_t>(si.totalram) * si.mem_unit;
    const int64_t ram_free = static_cast<int64_t>(si.freeram) * si.mem_unit;
    Json system;
    system["os"] = "posix";
    system["ram_total"] = ram_total;
    system["ram_free"] = ram_free;
    system["comfyui_version"] = kSimVersion;
    system["required_frontend_version"] = "1.27.10";
    system["installed_templates_version"] = nullptr;
    system["required_templates_version"] = "0.1.95";
    system["python_version"] = "3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]";
    system["pytorch_version"] = "1.13.0a0";
    system["embedded_python"] = false;
    system["argv"] = argv_;
    Json dev;
    if (options_.device == "cuda") {
      const int64_t vram = 25769803776;  // a 24 GiB card
      dev["name"] = "cuda:0 SIMULATED benchfleet-sim GPU : cudaMallocAsync";
      dev["type"] = "cuda";
      dev["index"] = 0;
      dev["vram_total"] = vram;
      dev["vram_free"] = vram - 536870912;
      dev["torch_vram_total"] = 0;
      dev["torch_vram_free"] = 0;
    } else {
      dev["name"] = "cpu";
      dev["type"] = "cpu";
      dev["index"] = nullptr;
      dev["vram_total"] = ram_total;
      dev["vram_free"] = ram_free;
      dev["torch_vram_total"] = ram_total;
      dev["torch_vram_free"] = ram_free;
    }
    ReplyJson(res, 200, Json{{"system", system}, {"devices", Json::array({dev})}});
  } else {
    NotFound(res);
  }
}

}  // namespace benchfleet::sim::comfyui
