// Tests of comfyui-sim against the real ComfyUI captures in tests/fixtures/comfyui: the eight
// captured runs replayed (websocket message order, cache hits, files), the 400 bodies, history,
// the cache modes, the fault modes and shutdown. The process tests start the built program on a
// free port.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/sha.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/sim/comfyui/png.h"
#include "tests/sim/comfyui/py_json.h"
#include "tests/sim/comfyui/websocket.h"
#include "tests/sim/sim_test_support.h"
#include "tests/support/subprocess.h"

namespace benchfleet::sim::comfyui {
namespace {

using testing::Exchange;
using testing::Keys;
using testing::KeyPaths;
using testing::Response;
using testing::Headers;

constexpr char kClientId[] = "3c6468ba73e04429b5d325f953c2aa91";

Json FixtureJson(const std::string& name) {
  std::ifstream in(std::string(BENCHFLEET_COMFYUI_FIXTURES) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

std::string Sha256(const std::string& s) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d);
  char hex[2 * SHA256_DIGEST_LENGTH + 1];
  for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) std::snprintf(hex + 2 * i, 3, "%02x", d[i]);
  return hex;
}

// A running comfyui-sim; stderr in log(). Killed at the end of the test.
class ComfySim {
 public:
  explicit ComfySim(std::vector<std::string> args) {
    if (std::getenv("BENCHFLEET_BIN_DIR") == nullptr) ::setenv("BENCHFLEET_BIN_DIR", BENCHFLEET_SIM_DEFAULT_BIN_DIR, 1);
    dir_ = benchfleet::testing::MakeTempDir("comfyui-sim-");
    port_ = benchfleet::testing::FreePort();
    std::vector<std::string> argv = {benchfleet::testing::BinaryPath("comfyui-sim"), "--listen", "127.0.0.1", "--port",
                                     std::to_string(port_)};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<benchfleet::testing::Subprocess>(argv, std::map<std::string, std::string>{},
                                                                 dir_ + "/server.log");
    for (int i = 0; i < 200; i++) {
      if (Exchange(port_, "GET", "/system_stats", "", std::chrono::seconds(1)).status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  int port() const { return port_; }
  std::string log() const {
    std::ifstream in(dir_ + "/server.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  benchfleet::testing::Subprocess& process() { return *process_; }
  Response Get(const std::string& path) { return Exchange(port_, "GET", path); }
  Response Post(const std::string& path, const std::string& body) { return Exchange(port_, "POST", path, body); }

 private:
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<benchfleet::testing::Subprocess> process_;
};

// A websocket client: the RFC 6455 handshake and unmasked server text frames.
class WsClient {
 public:
  ~WsClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Connects to path; returns the status code of the handshake response.
  int Connect(int port, const std::string& path) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return 0;
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    ::send(fd_, req.data(), req.size(), MSG_NOSIGNAL);
    while (buf_.find("\r\n\r\n") == std::string::npos) {
      if (!Fill(5000)) return 0;
    }
    const size_t end = buf_.find("\r\n\r\n") + 4;
    head_ = buf_.substr(0, end);
    buf_.erase(0, end);
    return std::atoi(head_.c_str() + 9);
  }
  const std::string& head() const { return head_; }
  // Returns the next text message, or nullopt after timeout_ms without one.
  std::optional<Json> Next(int timeout_ms = 10000) {
    for (;;) {
      if (buf_.size() >= 2) {
        uint64_t len = static_cast<uint8_t>(buf_[1]) & 0x7F;
        size_t off = 2;
        if (len == 126 && buf_.size() >= 4) {
          len = (static_cast<uint8_t>(buf_[2]) << 8) | static_cast<uint8_t>(buf_[3]);
          off = 4;
        } else if (len == 127 && buf_.size() >= 10) {
          len = 0;
          for (int i = 2; i < 10; i++) len = (len << 8) | static_cast<uint8_t>(buf_[i]);
          off = 10;
        } else if (len >= 126) {
          off = SIZE_MAX;
        }
        if (off != SIZE_MAX && buf_.size() >= off + len) {
          const std::string payload = buf_.substr(off, len);
          const int opcode = buf_[0] & 0x0F;
          buf_.erase(0, off + len);
          if (opcode == 1) return Json::parse(payload);
          continue;
        }
      }
      if (!Fill(timeout_ms)) return std::nullopt;
    }
  }

 private:
  bool Fill(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char b[65536];
    const ssize_t n = ::recv(fd_, b, sizeof(b), 0);
    if (n <= 0) return false;
    buf_.append(b, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string buf_;
  std::string head_;
};

// The capture graph (tests/fixtures/comfyui/README.md).
Json CaptureGraph(int seed, const std::string& prefix) {
  Json g = FixtureJson("post_prompt_ok_run1_first.json")["request"]["body"]["prompt"];
  g["2"]["inputs"]["seed"] = seed;
  g["4"]["inputs"]["filename_prefix"] = prefix;
  return g;
}

std::string PromptBody(const Json& graph, const std::string& prompt_id = "") {
  Json b;
  b["prompt"] = graph;
  b["client_id"] = kClientId;
  if (!prompt_id.empty()) b["prompt_id"] = prompt_id;
  return PyDumps(b);
}

// Posts a prompt and returns its websocket messages up to its final "executing" null.
struct SimRun {
  std::string prompt_id;
  std::vector<Json> messages;
};
SimRun PostAndCollect(ComfySim& sim, WsClient& ws, const std::string& body) {
  SimRun run;
  const Response r = sim.Post("/prompt", body);
  EXPECT_EQ(r.status, 200) << r.body;
  if (r.status != 200) return run;
  run.prompt_id = r.JsonBody()["prompt_id"].get<std::string>();
  for (;;) {
    std::optional<Json> m = ws.Next();
    if (!m) {
      ADD_FAILURE() << "no websocket message; run " << run.prompt_id;
      return run;
    }
    run.messages.push_back(*m);
    if ((*m)["type"] == "executing" && (*m)["data"]["node"].is_null() && (*m)["data"]["prompt_id"] == run.prompt_id) {
      return run;
    }
  }
}

std::vector<std::string> Types(const std::vector<Json>& msgs) {
  std::vector<std::string> t;
  for (const auto& m : msgs) t.push_back(m["type"].get<std::string>());
  return t;
}

// The capture's messages cut into runs (each ends with "executing" null); the first "status"
// (the one on connect) is left out.
std::vector<std::vector<Json>> CaptureRuns() {
  const Json all = FixtureJson("ws_messages_runs1to8.json");
  std::vector<std::vector<Json>> runs(1);
  for (size_t i = 1; i < all.size(); i++) {
    runs.back().push_back(all[i]["text"]);
    if (all[i]["text"]["type"] == "executing" && all[i]["text"]["data"]["node"].is_null()) runs.emplace_back();
  }
  runs.pop_back();
  return runs;
}

std::vector<std::string> CachedNodes(const std::vector<Json>& msgs) {
  for (const auto& m : msgs) {
    if (m["type"] == "execution_cached") return m["data"]["nodes"].get<std::vector<std::string>>();
  }
  return {"<no execution_cached>"};
}

std::string OutputFile(const std::vector<Json>& msgs) {
  for (const auto& m : msgs) {
    if (m["type"] == "executed") return m["data"]["output"]["images"][0]["filename"].get<std::string>();
  }
  return "";
}

TEST(ComfyUiSimUnits, PngIsValidAndDeterministic) {
  const std::string a = MakePng(4, 3, 42), b = MakePng(4, 3, 42), c = MakePng(4, 3, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(a.substr(a.size() - 12), std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12));
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Adler32("Wikipedia"), 0x11E60398u);
}

TEST(ComfyUiSimUnits, WebSocketAcceptIsRfc6455Example) {
  EXPECT_EQ(WebSocketAccept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_EQ(EncodeFrame(1, "hi"), std::string("\x81\x02hi"));
}

TEST(ComfyUiSimUnits, PythonJsonForms) {
  const Json j = Json::parse(R"({"a": 1, "b": [1.0, "x"], "c": null, "d": "it's"})");
  EXPECT_EQ(PyDumps(j), R"({"a": 1, "b": [1.0, "x"], "c": null, "d": "it's"})");
  EXPECT_EQ(PyRepr(j), R"({'a': 1, 'b': [1.0, 'x'], 'c': None, 'd': "it's"})");
}

// Replays the eight captured runs (free-lag on, waiting after /free as the capture's client did).
TEST(ComfyUiSimProcess, ReplaysCapturedRuns1To8) {
  ComfySim sim({});
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  EXPECT_NE(ws.head().find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), std::string::npos);
  const std::optional<Json> hello = ws.Next();
  ASSERT_TRUE(hello);
  EXPECT_EQ(*hello, FixtureJson("ws_messages_runs1to8.json")[0]["text"]);

  std::vector<SimRun> runs;
  runs.push_back(PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout"))));
  runs.push_back(PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout"))));
  runs.push_back(PostAndCollect(sim, ws, PromptBody(CaptureGraph(43, "heldout"))));
  runs.push_back(PostAndCollect(sim, ws, PromptBody(CaptureGraph(43, "heldout_b"))));
  runs.push_back(PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout"))));
  EXPECT_EQ(sim.Post("/free", R"({"unload_models": true, "free_memory": true})").status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the capture's client waited 2 s
  runs.push_back(PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout"))));
  runs.push_back(PostAndCollect(sim, ws, PromptBody(CaptureGraph(44, "heldout"), "11111111-2222-3333-4444-555555555555")));
  const Json run8_graph = FixtureJson("get_history_run8_runtime_error.json")["body_json"].begin().value()["prompt"][2];
  runs.push_back(PostAndCollect(sim, ws, PromptBody(run8_graph)));

  const std::vector<std::vector<Json>> capture = CaptureRuns();
  ASSERT_EQ(capture.size(), 8u);
  ASSERT_EQ(runs.size(), 8u);
  for (size_t i = 0; i < 8; i++) {
    SCOPED_TRACE("run" + std::to_string(i + 1));
    EXPECT_EQ(Types(runs[i].messages), Types(capture[i]));
    EXPECT_EQ(CachedNodes(runs[i].messages), CachedNodes(capture[i]));
    EXPECT_EQ(OutputFile(runs[i].messages), OutputFile(capture[i]));
    for (size_t k = 0; k < std::min(runs[i].messages.size(), capture[i].size()); k++) {
      EXPECT_EQ(KeyPaths(runs[i].messages[k]), KeyPaths(capture[i][k])) << "message " << k;
      if (capture[i][k]["type"] == "progress_state") {
        EXPECT_EQ(Keys(runs[i].messages[k]["data"]["nodes"]), Keys(capture[i][k]["data"]["nodes"])) << "message " << k;
      }
    }
  }
  EXPECT_EQ(runs[6].prompt_id, "11111111-2222-3333-4444-555555555555");

  // Same file and bytes for run1 and run2; run5 and run6 rewrote run1's image byte for byte.
  auto view = [&](const std::string& file) { return sim.Get("/view?filename=" + file + "&subfolder=&type=output"); };
  const Response png1 = view("heldout_00001_.png");
  ASSERT_EQ(png1.status, 200);
  EXPECT_EQ(png1.Header("Content-Type"), "image/png");
  EXPECT_EQ(png1.body.substr(1, 3), "PNG");
  const std::string sha1 = Sha256(png1.body);
  EXPECT_EQ(Sha256(view("heldout_00003_.png").body), sha1);  // run5
  EXPECT_EQ(Sha256(view("heldout_00004_.png").body), sha1);  // run6
  EXPECT_NE(Sha256(view("heldout_00002_.png").body), sha1);  // run3, seed 43
  EXPECT_EQ(view("heldout_b_00001_.png").body, view("heldout_00002_.png").body);  // run4: same image as run3

  // History: the shapes of the captured entries.
  auto history = [&](const SimRun& r) { return sim.Get("/history/" + r.prompt_id).JsonBody()[r.prompt_id]; };
  const Json h1 = history(runs[0]);
  EXPECT_EQ(KeyPaths(h1), KeyPaths(FixtureJson("get_history_run1_first.json")["body_json"].begin().value()));
  EXPECT_EQ(h1["prompt"][0], 0);
  EXPECT_EQ(h1["outputs"]["4"]["images"][0]["filename"], "heldout_00001_.png");
  const Json h2 = history(runs[1]);
  EXPECT_EQ(KeyPaths(h2), KeyPaths(FixtureJson("get_history_run2_identical.json")["body_json"].begin().value()));
  EXPECT_EQ(h2["status"]["messages"][1][1]["nodes"], Json::parse(R"(["1", "2", "3", "5", "4"])"));
  const Json h8 = history(runs[7]);
  const Json c8 = FixtureJson("get_history_run8_runtime_error.json")["body_json"].begin().value();
  EXPECT_EQ(KeyPaths(h8), KeyPaths(c8));
  EXPECT_EQ(h8["status"]["status_str"], "error");
  EXPECT_EQ(h8["status"]["completed"], false);
  EXPECT_EQ(h8["outputs"], Json::object());
  const Json& err = h8["status"]["messages"][2][1];
  const Json& cerr = c8["status"]["messages"][2][1];
  for (const char* k : {"node_id", "node_type", "executed", "exception_message", "exception_type", "traceback", "current_outputs"}) {
    EXPECT_EQ(err[k], cerr[k]) << k;
  }
  EXPECT_EQ(Keys(err["current_inputs"]), Keys(cerr["current_inputs"]));

  const Response unknown = sim.Get("/history/no-such-id");
  EXPECT_EQ(unknown.status, 200);
  EXPECT_EQ(unknown.body, "{}");
  EXPECT_EQ(unknown.Header("Content-Type"), "application/json; charset=utf-8");

  const std::string log = sim.log();
  // run2, served whole from the cache: real ComfyUI logs 0.00 s; the simulator logs its own
  // elapsed time, which a loaded or sanitized build can take a few milliseconds over.
  EXPECT_TRUE(std::regex_search(log, std::regex("got prompt\nPrompt executed in 0\\.[0-9]{2} seconds\n"))) << log;
  EXPECT_NE(log.find("!!! Exception during processing !!! Argument #4: Padding size should be less than the "
                     "corresponding input dimension, but got: padding (10, 10) at dimension 3 of input 4\n"
                     "Traceback (most recent call last):\n"),
            std::string::npos);
  EXPECT_NE(log.find("\nRuntimeError: Argument #4: Padding size"), std::string::npos);
}

TEST(ComfyUiSimProcess, RejectedPromptsMatchCapturesAndCountNumbers) {
  ComfySim sim({"--sim-checkpoints", ""});
  for (const char* name : {"post_prompt_invalid_multiple_input_errors.json", "post_prompt_invalid_unknown_class.json",
                           "post_prompt_invalid_no_outputs.json"}) {
    SCOPED_TRACE(name);
    const Json cap = FixtureJson(name);
    const Response r = sim.Post("/prompt", PyDumps(cap["request"]["body"]));
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.status_line, "HTTP/1.1 400 Bad Request");
    EXPECT_EQ(r.JsonBody(), cap["body_json"]);
    EXPECT_EQ(KeyPaths(r.JsonBody()), KeyPaths(cap["body_json"]));
    EXPECT_EQ(r.Header("Content-Length"), cap["headers"]["Content-Length"].get<std::string>());
  }
  const Response ok = sim.Post("/api/prompt", PromptBody(CaptureGraph(42, "heldout")));
  ASSERT_EQ(ok.status, 200);
  EXPECT_EQ(ok.JsonBody()["number"], 3);
  EXPECT_EQ(Keys(ok.JsonBody()), Keys(FixtureJson("post_prompt_ok_run1_first.json")["body_json"]));
  Headers names;
  for (const auto& [k, v] : ok.headers) names.emplace_back(k, "");
  EXPECT_EQ(names, (Headers{{"Content-Type", ""}, {"Content-Length", ""}, {"Date", ""}, {"Server", ""}}));
  EXPECT_EQ(ok.body.size(), 85u);

  const std::string log = sim.log();
  EXPECT_NE(log.find("got prompt\nFailed to validate prompt for output 9:\n* CheckpointLoaderSimple 4:\n"
                     "  - Value not in list: ckpt_name: 'v1-5-pruned-emaonly.safetensors' not in []\n"
                     "* EmptyLatentImage 5:\n  - Required input is missing: width\n* KSampler 3:\n"
                     "  - Value 0 smaller than min of 1: steps\n"
                     "  - Value not in list: sampler_name: 'nope' not in (list of length 42)\nOutput will be ignored\n"
                     "invalid prompt: {'type': 'prompt_outputs_failed_validation', 'message': 'Prompt outputs failed "
                     "validation', 'details': '', 'extra_info': {}}\n"),
            std::string::npos);
  EXPECT_NE(log.find("invalid prompt: {'type': 'invalid_prompt', 'message': 'Cannot execute because node DoesNotExist "
                     "does not exist.', 'details': \"Node ID '#1'\", 'extra_info': {}}\n"),
            std::string::npos);
}

TEST(ComfyUiSimProcess, SystemStatsQueueAndApiPrefix) {
  ComfySim sim({"--sim-device", "cuda", "--sim-node-ms", "100"});
  const Response s = sim.Get("/api/system_stats");
  ASSERT_EQ(s.status, 200);
  const Json cap = FixtureJson("get_system_stats.json")["body_json"];
  EXPECT_EQ(KeyPaths(s.JsonBody()), KeyPaths(cap));
  EXPECT_EQ(s.JsonBody()["system"]["comfyui_version"], "0.3.64-benchfleet-sim (SIMULATED)");
  EXPECT_EQ(s.JsonBody()["devices"][0]["type"], "cuda");
  EXPECT_EQ(s.JsonBody()["devices"][0]["index"], 0);

  const Response p = sim.Post("/prompt", PromptBody(CaptureGraph(42, "heldout")));
  ASSERT_EQ(p.status, 200);
  // As in ComfyUI, the prompt waits in queue_pending until the worker takes it (a moment, longer
  // on a loaded machine), then runs for a node time per node.
  Json q = sim.Get("/api/queue").JsonBody();
  for (int i = 0; i < 500 && q["queue_running"].empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    q = sim.Get("/api/queue").JsonBody();
  }
  const Json cq = FixtureJson("get_queue_right_after_post_run1_first.json")["body_json"];
  EXPECT_EQ(Keys(q), Keys(cq));
  ASSERT_EQ(q["queue_running"].size(), 1u);
  EXPECT_EQ(q["queue_running"][0][1], p.JsonBody()["prompt_id"]);
  EXPECT_EQ(q["queue_running"][0][2], cq["queue_running"][0][2]);
  EXPECT_EQ(q["queue_running"][0][3], cq["queue_running"][0][3]);
  EXPECT_EQ(q["queue_running"][0][4], cq["queue_running"][0][4]);
  EXPECT_EQ(sim.Get("/api/history/no-such-id").body, "{}");
  EXPECT_EQ(sim.Get("/nope").status, 404);
}

// /free is applied only when the worker's queue wait ends: a prompt sent at once after it is
// still served from the cache (as real ComfyUI can); one sent after the lag re-runs.
TEST(ComfyUiSimProcess, FreeLagServesAnImmediatePromptFromCache) {
  ComfySim sim({"--sim-free-lag-ms", "300"});
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  ws.Next();
  PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
  ASSERT_EQ(sim.Post("/free", R"({"unload_models": true, "free_memory": true})").status, 200);
  const SimRun immediate = PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
  EXPECT_EQ(CachedNodes(immediate.messages), (std::vector<std::string>{"1", "2", "3", "5", "4"}));
  const SimRun after = PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
  EXPECT_EQ(CachedNodes(after.messages), std::vector<std::string>{});
}

TEST(ComfyUiSimProcess, NoFreeLagClearsAtOnce) {
  ComfySim sim({"--no-sim-free-lag"});
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  ws.Next();
  PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
  ASSERT_EQ(sim.Post("/free", R"({"unload_models": true, "free_memory": true})").status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const SimRun again = PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
  EXPECT_EQ(CachedNodes(again.messages), std::vector<std::string>{});
}

TEST(ComfyUiSimProcess, LruAndNoneCaches) {
  {
    ComfySim sim({"--sim-cache", "lru:4"});
    WsClient ws;
    ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
    ws.Next();
    PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
    PostAndCollect(sim, ws, PromptBody(CaptureGraph(43, "heldout")));
    const SimRun back = PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
    EXPECT_EQ(CachedNodes(back.messages), (std::vector<std::string>{"1", "2", "3", "5", "4"}));
  }
  {
    ComfySim sim({"--sim-cache", "none"});
    WsClient ws;
    ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
    ws.Next();
    PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
    const SimRun again = PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
    EXPECT_EQ(CachedNodes(again.messages), std::vector<std::string>{});
    EXPECT_EQ(OutputFile(again.messages), "heldout_00002_.png");
  }
}

// ComfyUI's own --cache-none (written from ComfyUI's source, not captured: main.py's
// prompt_worker picks CacheType.NONE, comfy_execution/caching.py's NullCache.get returns None,
// and execution.py lists in execution_cached the nodes whose cached output is not None): every
// prompt re-executes, and execution_cached, on the websocket and in /history, lists no node.
TEST(ComfyUiSimProcess, CacheNoneFlagReportsNothingCached) {
  ComfySim sim({"--cache-none", "--sim-node-ms", "1"});
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  ws.Next();
  std::vector<SimRun> runs;
  for (int i = 0; i < 3; i++) runs.push_back(PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout"))));
  for (size_t i = 0; i < runs.size(); i++) {
    EXPECT_EQ(CachedNodes(runs[i].messages), std::vector<std::string>{}) << i;
    std::vector<std::string> executing;
    for (const Json& m : runs[i].messages) {
      if (m["type"] == "executing" && m["data"]["node"].is_string()) executing.push_back(m["data"]["node"]);
    }
    EXPECT_EQ(executing, (std::vector<std::string>{"1", "2", "3", "5", "4"})) << i;
    const Json history = sim.Get("/history/" + runs[i].prompt_id).JsonBody()[runs[i].prompt_id];
    ASSERT_EQ(history["status"]["messages"][1][0], "execution_cached") << history.dump();
    EXPECT_EQ(history["status"]["messages"][1][1]["nodes"], Json::array()) << i;
  }
  EXPECT_EQ(OutputFile(runs[2].messages), "heldout_00003_.png");
  const Json argv = sim.Get("/system_stats").JsonBody()["system"]["argv"];
  EXPECT_NE(std::find(argv.begin(), argv.end(), Json("--cache-none")), argv.end()) << argv.dump();
}

TEST(ComfyUiSimProcess, CacheLruFlagKeepsEarlierPrompts) {
  ComfySim sim({"--cache-lru", "4", "--sim-node-ms", "1"});
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  ws.Next();
  PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
  PostAndCollect(sim, ws, PromptBody(CaptureGraph(43, "heldout")));
  const SimRun back = PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
  EXPECT_EQ(CachedNodes(back.messages), (std::vector<std::string>{"1", "2", "3", "5", "4"}));
}

// ComfyUI's validate_inputs converts a STRING input with str() (execution.py, written from its
// source, not captured): an integer filename_prefix is accepted and saved as "7_00001_.png".
TEST(ComfyUiSimProcess, StringInputsAreConvertedWithStr) {
  ComfySim sim({"--sim-node-ms", "1"});
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  ws.Next();
  Json graph = CaptureGraph(42, "x");
  graph["4"]["inputs"]["filename_prefix"] = 7;
  const SimRun first = PostAndCollect(sim, ws, PromptBody(graph));
  EXPECT_EQ(OutputFile(first.messages), "7_00001_.png");
  graph["4"]["inputs"]["filename_prefix"] = 8;
  const SimRun second = PostAndCollect(sim, ws, PromptBody(graph));
  // Only the prefix changed: ComfyUI re-runs SaveImage alone (as the capture's run4).
  EXPECT_EQ(CachedNodes(second.messages), (std::vector<std::string>{"1", "2", "3", "5"}));
  EXPECT_EQ(OutputFile(second.messages), "8_00001_.png");
  const Json history = sim.Get("/history/" + first.prompt_id).JsonBody()[first.prompt_id];
  EXPECT_EQ(history["prompt"][2]["4"]["inputs"]["filename_prefix"], "7");
}

Json Sd15Graph(int steps) {
  return Json::parse(R"({
 "3": {"class_type": "KSampler", "inputs": {"seed": 42, "steps": )" + std::to_string(steps) + R"(, "cfg": 7.0,
   "sampler_name": "euler", "scheduler": "normal", "denoise": 1.0, "model": ["4", 0], "positive": ["6", 0],
   "negative": ["7", 0], "latent_image": ["5", 0]}},
 "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "v1-5-pruned-emaonly-fp16.safetensors"}},
 "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
 "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a photo of a cat", "clip": ["4", 1]}},
 "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "blurry", "clip": ["4", 1]}},
 "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
 "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "ComfyUI", "images": ["8", 0]}}})");
}

TEST(ComfyUiSimProcess, Sd15ProgressPerStepAndRuntimeError) {
  ComfySim sim({"--sim-step-ms", "1", "--sim-max-steps", "50"});
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  ws.Next();
  const SimRun ok = PostAndCollect(sim, ws, PromptBody(Sd15Graph(3)));
  std::vector<Json> progress;
  for (const auto& m : ok.messages) {
    if (m["type"] == "progress") progress.push_back(m["data"]);
  }
  ASSERT_EQ(progress.size(), 3u);
  EXPECT_EQ(progress[2], (Json{{"value", 3}, {"max", 3}, {"prompt_id", ok.prompt_id}, {"node", "3"}}));
  EXPECT_EQ(OutputFile(ok.messages), "ComfyUI_00001_.png");
  const Response png = sim.Get("/view?filename=ComfyUI_00001_.png&type=output");
  ASSERT_EQ(png.status, 200);
  EXPECT_EQ(png.body.substr(16, 8), std::string("\0\0\0\x40\0\0\0\x40", 8));  // 64x64

  const SimRun bad = PostAndCollect(sim, ws, PromptBody(Sd15Graph(51)));
  EXPECT_EQ(Types(bad.messages).back(), "executing");
  const Json& e = bad.messages[bad.messages.size() - 3];
  ASSERT_EQ(e["type"], "execution_error");
  EXPECT_EQ(e["data"]["node_id"], "3");
  EXPECT_EQ(e["data"]["node_type"], "KSampler");
  EXPECT_EQ(e["data"]["exception_message"], "SIMULATED: KSampler steps 51 exceed --sim-max-steps 50\n");
  const Json h = sim.Get("/history/" + bad.prompt_id).JsonBody()[bad.prompt_id];
  EXPECT_EQ(h["status"]["status_str"], "error");
}

// The example series' workflow (examples/series) validates and runs with the default checkpoints.
TEST(ComfyUiSimProcess, ExampleSd15WorkflowRuns) {
  ComfySim sim({"--sim-step-ms", "1"});
  std::ifstream in(std::string(BENCHFLEET_EXAMPLES_DIR) + "/sd15-txt2img.workflow.json");
  if (!in) GTEST_SKIP() << "examples/series/sd15-txt2img.workflow.json not present";
  std::stringstream ss;
  ss << in.rdbuf();
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  ws.Next();
  const SimRun run = PostAndCollect(sim, ws, PromptBody(Json::parse(ss.str())));
  EXPECT_EQ(OutputFile(run.messages), "benchfleet_00001_.png");
  const std::vector<std::string> types = Types(run.messages);
  EXPECT_EQ(std::count(types.begin(), types.end(), "progress"), 20);  // steps 20
  EXPECT_EQ(types.back(), "executing");
  EXPECT_EQ(types[types.size() - 3], "execution_success");
}

TEST(ComfyUiSimProcess, InterruptStopsTheRunningPrompt) {
  ComfySim sim({"--sim-step-ms", "5"});
  WsClient ws;
  ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
  ws.Next();
  const Response p = sim.Post("/prompt", PromptBody(Sd15Graph(400)));
  ASSERT_EQ(p.status, 200);
  const std::string id = p.JsonBody()["prompt_id"].get<std::string>();
  std::vector<std::string> types;
  bool interrupted = false;
  while (std::optional<Json> m = ws.Next(5000)) {
    types.push_back((*m)["type"].get<std::string>());
    if (!interrupted && types.back() == "progress") {
      EXPECT_EQ(sim.Post("/interrupt", "").status, 200);
      interrupted = true;
    }
    if (types.back() == "execution_interrupted") {
      EXPECT_EQ((*m)["data"]["node_type"], "KSampler");
      EXPECT_EQ(Keys((*m)["data"]), (std::vector<std::string>{"prompt_id", "node_id", "node_type", "executed", "timestamp"}));
    }
    if (types.back() == "executing" && (*m)["data"]["node"].is_null()) break;
  }
  EXPECT_NE(std::find(types.begin(), types.end(), "execution_interrupted"), types.end());
  EXPECT_EQ(std::find(types.begin(), types.end(), "execution_success"), types.end());
  const Json h = sim.Get("/history/" + id).JsonBody()[id];
  EXPECT_EQ(h["status"]["status_str"], "error");
  EXPECT_EQ(h["status"]["completed"], false);
  EXPECT_NE(sim.log().find("Global interrupt (no prompt_id specified)\n"), std::string::npos);
}

TEST(ComfyUiSimProcess, ObjectInfoKSamplerMatchesCapture) {
  ComfySim sim({});
  const Response r = sim.Get("/api/object_info/KSampler");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.JsonBody(), FixtureJson("get_object_info_KSampler.json")["body_json"]);
  EXPECT_EQ(r.body.size(), 2795u);
  EXPECT_EQ(sim.Get("/object_info/NoSuchNode").body, "{}");
}

TEST(ComfyUiSimFaults, NoWebsocketAnswers404AndHistoryStillWorks) {
  ComfySim sim({"--sim-fail", "no-websocket"});
  WsClient ws;
  EXPECT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 404);
  const Response p = sim.Post("/prompt", PromptBody(CaptureGraph(42, "heldout")));
  ASSERT_EQ(p.status, 200);
  const std::string id = p.JsonBody()["prompt_id"].get<std::string>();
  Json h;
  for (int i = 0; i < 200 && h.empty(); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    h = sim.Get("/history/" + id).JsonBody();
  }
  ASSERT_TRUE(h.contains(id));
  EXPECT_EQ(h[id]["status"]["status_str"], "success");
}

TEST(ComfyUiSimFaults, GarbageHistoryMissingImageAndHang) {
  {
    ComfySim sim({"--sim-fail", "garbage-history"});
    const Response r = sim.Get("/history/x");
    EXPECT_EQ(r.status, 200);
    EXPECT_THROW(Json::parse(r.body), Json::parse_error);
  }
  {
    ComfySim sim({"--sim-fail", "missing-image"});
    WsClient ws;
    ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
    ws.Next();
    const SimRun run = PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
    EXPECT_EQ(OutputFile(run.messages), "heldout_00001_.png");
    EXPECT_EQ(sim.Get("/view?filename=heldout_00001_.png&subfolder=&type=output").status, 404);
  }
  {
    ComfySim sim({"--sim-fail", "hang-on-prompt", "2"});
    WsClient ws;
    ASSERT_EQ(ws.Connect(sim.port(), std::string("/ws?clientId=") + kClientId), 101);
    ws.Next();
    PostAndCollect(sim, ws, PromptBody(CaptureGraph(42, "heldout")));
    const Response p = sim.Post("/prompt", PromptBody(CaptureGraph(43, "heldout")));
    ASSERT_EQ(p.status, 200);
    std::vector<std::string> types;
    while (std::optional<Json> m = ws.Next(500)) types.push_back((*m)["type"].get<std::string>());
    EXPECT_EQ(types, (std::vector<std::string>{"status", "status", "execution_start", "execution_cached",
                                               "progress_state", "executing"}));
    EXPECT_EQ(sim.Get("/queue").JsonBody()["queue_running"].size(), 1u);
    EXPECT_EQ(sim.Get("/history/" + p.JsonBody()["prompt_id"].get<std::string>()).body, "{}");
    sim.process().Signal(SIGTERM);
    EXPECT_EQ(sim.process().Wait(), 0);
  }
}

TEST(ComfyUiSimProcess, SigtermExitsZero) {
  ComfySim sim({});
  ASSERT_EQ(sim.Get("/system_stats").status, 200);
  sim.process().Signal(SIGTERM);
  EXPECT_EQ(sim.process().Wait(), 0);
}

TEST(ComfyUiSimProcess, UnknownFlagFailsLikeArgparse) {
  if (std::getenv("BENCHFLEET_BIN_DIR") == nullptr) ::setenv("BENCHFLEET_BIN_DIR", BENCHFLEET_SIM_DEFAULT_BIN_DIR, 1);
  benchfleet::testing::Subprocess p({benchfleet::testing::BinaryPath("comfyui-sim"), "--bogus"});
  EXPECT_EQ(p.Wait(), 2);
}

}  // namespace
}  // namespace benchfleet::sim::comfyui
