// How the llama-server backend fails: each failure ends that run (a FAILED record) or that mode
// (Open's error) with a clear reason, and says whether the session can go on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <stop_token>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "agent/backends/llama_server/llama_server_backend.h"
#include "tests/unit/agent/llama_server/backend_test_fixture.h"

namespace benchfleet::agent::testing {
namespace {

// Returns the state letter of /proc/PID/stat ('Z' for a zombie), or 0.
char ProcState(pid_t pid) {
  const std::string stat = ReadText(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
}

class LlamaServerErrorsTest : public LlamaServerBackendTest {
 protected:
  // Opens a session on the replay server given by url.
  std::unique_ptr<BackendSession> OpenUrl(const std::string& extra = "") {
    ServeHealthyServer("completion_1.txt", /*standin=*/false);
    absl::StatusOr<std::unique_ptr<Backend>> backend = Make(UrlSection(extra));
    EXPECT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    absl::StatusOr<std::unique_ptr<BackendSession>> session = backend_->Open({}, nullptr);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }

  std::string CompletionUrl() const { return server_.base_url() + "/completion"; }

  std::unique_ptr<Backend> backend_;
};

// --- Open: the mode fails ---

TEST_F(LlamaServerErrorsTest, ModelMissing) {
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(absl::StrReplaceAll(LaunchedSection(), {{"tiny", "gone"}}));
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "gpu"}}, nullptr);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(session.status().message(), absl::StrCat("model file ", dir_.path(), "/models/gone.gguf does not exist"));
}

TEST_F(LlamaServerErrorsTest, BinaryMissing) {
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      Make(absl::StrReplaceAll(LaunchedSection(), {{standin_, "/nonexistent/llama-server"}}));
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "gpu"}}, nullptr);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(session.status().message(), "cannot start /nonexistent/llama-server: No such file or directory");
}

TEST_F(LlamaServerErrorsTest, ServerExitsWhileLoading) {
  // Nothing listens: /health is refused until the script has exited. A long deadline, so that
  // the exit (real time) is what ends the wait and not the stepping clock.
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      Make(absl::StrReplaceAll(LaunchedSection("health_timeout: 10h\n"), {{standin_, crasher_}}), UnusedLoopbackPort());
  ASSERT_TRUE(backend.ok()) << backend.status();
  std::string log_tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "gpu"}}, &log_tail);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(session.status().message(),
            absl::StrCat("llama-server exited while loading (exit code 1); its log: ", work_dir_, "/llama-server-gpu.log"));
  EXPECT_EQ(log_tail,
            "llama_model_load: error loading model: tensor 'blk.0.attn_q.weight' data is not within the file bounds\n"
            "main: exiting due to model loading error");
}

TEST_F(LlamaServerErrorsTest, HealthNeverReady) {
  std::vector<Reply> health = {ReplyFromCapture(Fixture("health_loading.txt"))};
  health.front().before = [this] { Eventually([this] { return Env::Default()->FileExists(ready_file_); }); };
  server_.On("GET /health", health);
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection("health_timeout: 2s\n"));
  ASSERT_TRUE(backend.ok()) << backend.status();
  std::string log_tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "gpu"}}, &log_tail);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(session.status().message(), "llama-server was not ready within 2s: the last GET /health answered 503 Loading model");
  EXPECT_EQ(log_tail, *LogTail(std::string(BENCHFLEET_LLAMA_FIXTURES) + "/startup_verbose_lv4.log", 30));
  // The server that never became ready was stopped.
  const pid_t pid = ServerPid();
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_GE(server_.count("GET /health"), 8);
}

// Issue 19 case 6: a stop (SIGTERM, a task's cancel) while the server loads ends the wait at once
// (here the second /health, of a health_timeout of 10h) and the server that was starting is stopped.
TEST_F(LlamaServerErrorsTest, AStopWhileTheServerLoadsEndsTheWaitAndStopsTheServer) {
  std::stop_source stop;
  std::vector<Reply> health = {ReplyFromCapture(Fixture("health_loading.txt")),
                               ReplyFromCapture(Fixture("health_loading.txt"))};
  health.front().before = [this] { Eventually([this] { return Env::Default()->FileExists(ready_file_); }); };
  health.back().before = [&stop] { stop.request_stop(); };
  server_.On("GET /health", health);
  context_.stop = stop.get_token();
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection("health_timeout: 10h\n"));
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "gpu"}}, nullptr);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(session.status().message(),
            "stopped while waiting for llama-server to be ready (the last GET /health answered 503 Loading model)");
  EXPECT_EQ(server_.count("GET /health"), 2);
  // One poll interval waited in full (after the first answer), none after the stop.
  EXPECT_EQ(clock_.slept(), absl::Milliseconds(250));
  EXPECT_EQ(::kill(ServerPid(), 0), -1);  // stopped and reaped
}

TEST_F(LlamaServerErrorsTest, HealthNeverAnswers) {
  const int port = UnusedLoopbackPort();
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection("health_timeout: 1s\n"), port);
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "gpu"}}, nullptr);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(session.status().message(),
            absl::StrCat("llama-server was not ready within 1s: the last GET /health failed: GET http://127.0.0.1:",
                         port, "/health: cannot connect: Connection refused"));
}

TEST_F(LlamaServerErrorsTest, PropsUnreadable) {
  ServeHealth(0);
  server_.On("GET /props", {JsonReply(404, R"({"error":{"code":404,"message":"File Not Found"}})")});
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({}, nullptr);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(session.status().message(),
            R"(cannot read llama-server's /props: it answered 404: {"error":{"code":404,"message":"File Not Found"}})");
}

// --- Run: the run fails ---

TEST_F(LlamaServerErrorsTest, PromptTooLong) {
  std::unique_ptr<BackendSession> session = OpenUrl();
  ASSERT_NE(session, nullptr);
  server_.On("POST /completion", {ReplyFromCapture(Fixture("error_prompt_too_long.txt"))});
  const v1::RunRecord record = RunOnce(*session);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(record.status().message(),
            "llama-server answered 400 (exceed_context_size_error): request (1491 tokens) exceeds the available "
            "context size (256 tokens), try increasing it");
  EXPECT_EQ(record.metrics_size(), 0);
  EXPECT_EQ(record.outputs_size(), 0);
  EXPECT_TRUE(session->alive());  // the server is fine; the next run may go on
}

TEST_F(LlamaServerErrorsTest, ServerError500) {
  std::unique_ptr<BackendSession> session = OpenUrl();
  ASSERT_NE(session, nullptr);
  server_.On("POST /completion", {ReplyFromCapture(Fixture("error_malformed_json.txt"))});
  const v1::RunRecord record = RunOnce(*session);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(record.status().message(),
            "llama-server answered 500 (server_error): [json.exception.parse_error.101] parse error at line 1, column "
            "36: syntax error while parsing object key - unexpected end of input; expected string literal");
  EXPECT_TRUE(session->alive());
}

TEST_F(LlamaServerErrorsTest, ErrorStatusWithABodyThatIsNotJson) {
  std::unique_ptr<BackendSession> session = OpenUrl();
  ASSERT_NE(session, nullptr);
  server_.On("POST /completion", {JsonReply(502, "<html><h1>502 Bad Gateway</h1></html>", "text/html")});
  const v1::RunRecord record = RunOnce(*session);
  EXPECT_EQ(record.status().message(),
            "llama-server answered 502 with a body that is not a llama-server error: <html><h1>502 Bad "
            "Gateway</h1></html>");
}

TEST_F(LlamaServerErrorsTest, OkStatusWithABodyThatIsNotJson) {
  std::unique_ptr<BackendSession> session = OpenUrl();
  ASSERT_NE(session, nullptr);
  server_.On("POST /completion", {JsonReply(200, "<html>hello</html>", "text/html")});
  const v1::RunRecord record = RunOnce(*session);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(record.status().message(),
            "llama-server answered 200 with a body that is not a completion: [json.exception.parse_error.101] parse "
            "error at line 1, column 1: syntax error while parsing value - invalid literal; last read: '<'");
  EXPECT_TRUE(session->alive());
}

TEST_F(LlamaServerErrorsTest, TruncatedBody) {
  std::unique_ptr<BackendSession> session = OpenUrl();
  ASSERT_NE(session, nullptr);
  Reply reply = ReplyFromCapture(Fixture("completion_1.txt"));
  reply.fault = Reply::Fault::kTruncate;
  reply.truncate_at = 911;
  server_.On("POST /completion", {reply});
  const v1::RunRecord record = RunOnce(*session);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(record.status().message(),
            absl::StrCat("POST ", CompletionUrl(), ": truncated body: the connection closed after 911 of 1822 bytes"));
  EXPECT_TRUE(session->alive());
}

TEST_F(LlamaServerErrorsTest, StreamWithoutItsFinalEvent) {
  std::unique_ptr<BackendSession> session = OpenUrl("stream: true\n");
  ASSERT_NE(session, nullptr);
  Reply reply = ReplyFromCapture(Fixture("completion_stream.txt"));
  reply.body = reply.body.substr(0, reply.body.find("data: {\"index\":0,\"content\":\"\",\"tokens\":[]"));
  server_.On("POST /completion", {reply});
  const v1::RunRecord record = RunOnce(*session);
  EXPECT_EQ(record.status().message(),
            "llama-server answered 200 with a body that is not a completion: the stream ended after 24 events "
            "without its final event (\"stop\": true)");
}

TEST_F(LlamaServerErrorsTest, RequestHangs) {
  std::unique_ptr<BackendSession> session = OpenUrl("request_timeout: 300ms\n");
  ASSERT_NE(session, nullptr);
  Reply hang;
  hang.fault = Reply::Fault::kHang;
  server_.On("POST /completion", {hang});
  const v1::RunRecord record = RunOnce(*session);
  const std::string reason =
      absl::StrCat("POST ", CompletionUrl(), ": no complete answer within 300ms (0 bytes of body received)");
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(record.status().message(), reason);
  EXPECT_FALSE(session->alive());
  EXPECT_EQ(RunOnce(*session).status().message(),
            absl::StrCat("llama-server is not running: an earlier run failed: ", reason));
}

TEST_F(LlamaServerErrorsTest, ConnectionRefused) {
  std::unique_ptr<BackendSession> session = OpenUrl();
  ASSERT_NE(session, nullptr);
  server_.Stop();
  const v1::RunRecord record = RunOnce(*session);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(record.status().message(), absl::StrCat("POST ", CompletionUrl(), ": cannot connect: Connection refused"));
  EXPECT_FALSE(session->alive());
}

TEST_F(LlamaServerErrorsTest, ServerDiesMidRun) {
  ServeHealthyServer();
  Reply die;
  die.fault = Reply::Fault::kCloseWithoutAnswer;
  die.before = [this] { ::kill(ServerPid(), SIGKILL); };
  server_.On("POST /completion", {die});
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "cpu"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();

  const v1::RunRecord record = RunOnce(**session);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(record.status().message(),
            absl::StrCat("llama-server exited during the run (killed by signal 9 (SIGKILL)): POST ", CompletionUrl(),
                         ": the server closed the connection without answering"));
  EXPECT_EQ(record.status().log_tail(), *LogTail(work_dir_ + "/llama-server-cpu.log", 30));
  EXPECT_FALSE((*session)->alive());

  const v1::RunRecord next = RunOnce(**session, v1::PHASE_WARM, 1);
  EXPECT_EQ(next.status().message(),
            "llama-server is not running: it exited during an earlier run (killed by signal 9 (SIGKILL))");
  EXPECT_EQ(server_.count("POST /completion"), 1);
  EXPECT_TRUE((*session)->Close().ok());
  EXPECT_EQ(logs_.back(), "llama-server cpu had already exited (killed by signal 9 (SIGKILL))");
}

TEST_F(LlamaServerErrorsTest, ServerDiesBetweenRuns) {
  ServeHealthyServer();
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "cpu"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ(RunOnce(**session).status().code(), v1::RunStatus::CODE_OK);

  const pid_t pid = ServerPid();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(Eventually([&] { return ProcState(pid) == 'Z'; }));
  const v1::RunRecord record = RunOnce(**session, v1::PHASE_WARM, 1);
  EXPECT_EQ(record.status().message(), "llama-server is not running: it exited between runs (killed by signal 9 (SIGKILL))");
  EXPECT_FALSE((*session)->alive());
  EXPECT_EQ(server_.count("POST /completion"), 1);
}

}  // namespace
}  // namespace benchfleet::agent::testing
