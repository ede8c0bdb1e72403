#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/http/http_client.h"
#include "tests/unit/agent/llama_server/replay_server.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::benchfleet::agent::testing::Fixture;
using ::benchfleet::agent::testing::JsonReply;
using ::benchfleet::agent::testing::Reply;
using ::benchfleet::agent::testing::ReplayServer;
using ::benchfleet::agent::testing::ReplyFromCapture;
using ::testing::HasSubstr;

std::string BodyOf(const std::string& capture) { return ReplyFromCapture(capture).body; }

HttpRequest Post(const std::string& url, std::string body) {
  HttpRequest request;
  request.method = "POST";
  request.url = url;
  request.body = std::move(body);
  return request;
}

HttpRequest Get(const std::string& url) {
  HttpRequest request;
  request.url = url;
  return request;
}

class CurlHttpClientTest : public ::testing::Test {
 protected:
  ReplayServer server_;
  std::unique_ptr<HttpClient> client_ = NewCurlHttpClient();
};

TEST_F(CurlHttpClientTest, GetReturnsStatusContentTypeAndBody) {
  server_.On("GET /health", {ReplyFromCapture(Fixture("health.txt"))});
  absl::StatusOr<HttpResponse> response = client_->Send(Get(server_.base_url() + "/health"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->content_type, "application/json; charset=utf-8");
  EXPECT_EQ(response->body, R"({"status":"ok"})");
}

TEST_F(CurlHttpClientTest, AnErrorStatusIsAResponseNotAnError) {
  server_.On("GET /health", {ReplyFromCapture(Fixture("health_loading.txt"))});
  absl::StatusOr<HttpResponse> response = client_->Send(Get(server_.base_url() + "/health"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->body, R"({"error":{"message":"Loading model","type":"unavailable_error","code":503}})");
}

TEST_F(CurlHttpClientTest, PostSendsTheJsonBody) {
  server_.On("POST /completion", {ReplyFromCapture(Fixture("completion_1.txt"))});
  const std::string body = R"({"prompt":"Explain in one sentence what a GPU is.","n_predict":24})";
  absl::StatusOr<HttpResponse> response = client_->Send(Post(server_.base_url() + "/completion", body));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, BodyOf(Fixture("completion_1.txt")));
  ASSERT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(server_.requests()[0].method_and_path, "POST /completion");
  EXPECT_EQ(server_.requests()[0].body, body);
  EXPECT_THAT(server_.requests()[0].head, HasSubstr("\r\nContent-Type: application/json\r\n"));
  EXPECT_THAT(server_.requests()[0].head, ::testing::Not(HasSubstr("Expect:")));
}

TEST_F(CurlHttpClientTest, StreamingHandsEveryChunkToTheCallback) {
  Reply reply = ReplyFromCapture(Fixture("completion_stream.txt"));
  ASSERT_TRUE(reply.chunked);
  reply.chunk_delay = absl::Milliseconds(2);
  server_.On("POST /completion", {reply});
  std::vector<std::string> chunks;
  absl::StatusOr<HttpResponse> response =
      client_->Send(Post(server_.base_url() + "/completion", "{}"), [&](std::string_view chunk) {
        chunks.emplace_back(chunk);
        return true;
      });
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->content_type, "text/event-stream");
  EXPECT_EQ(response->body, reply.body);
  EXPECT_GT(chunks.size(), 1u);
  std::string joined;
  for (const std::string& c : chunks) joined += c;
  EXPECT_EQ(joined, reply.body);
}

TEST_F(CurlHttpClientTest, CallbackCanAbortTheTransfer) {
  server_.On("POST /completion", {ReplyFromCapture(Fixture("completion_stream.txt"))});
  const std::string url = server_.base_url() + "/completion";
  absl::StatusOr<HttpResponse> response = client_->Send(Post(url, "{}"), [](std::string_view) { return false; });
  EXPECT_EQ(response.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(response.status().message(), absl::StrCat("POST ", url, ": aborted by the reader"));
}

TEST_F(CurlHttpClientTest, RefusedConnectionIsUnavailable) {
  const std::string url = absl::StrCat("http://127.0.0.1:", testing::UnusedLoopbackPort(), "/health");
  absl::StatusOr<HttpResponse> response = client_->Send(Get(url));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(response.status().message(), absl::StrCat("GET ", url, ": cannot connect: Connection refused"));
}

TEST_F(CurlHttpClientTest, HangingServerHitsTheTotalTimeout) {
  Reply hang;
  hang.fault = Reply::Fault::kHang;
  server_.On("POST /completion", {hang});
  HttpRequest request = Post(server_.base_url() + "/completion", "{}");
  request.total_timeout = absl::Milliseconds(300);
  absl::StatusOr<HttpResponse> response = client_->Send(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(response.status().message(),
            absl::StrCat("POST ", request.url, ": no complete answer within 300ms (0 bytes of body received)"));
}

TEST_F(CurlHttpClientTest, TruncatedBodyIsDataLoss) {
  Reply reply = ReplyFromCapture(Fixture("completion_1.txt"));
  reply.fault = Reply::Fault::kTruncate;
  reply.truncate_at = 911;
  server_.On("POST /completion", {reply});
  const std::string url = server_.base_url() + "/completion";
  absl::StatusOr<HttpResponse> response = client_->Send(Post(url, "{}"));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(response.status().message(),
            absl::StrCat("POST ", url, ": truncated body: the connection closed after 911 of 1822 bytes"));
}

TEST_F(CurlHttpClientTest, TruncatedChunkedStreamIsDataLoss) {
  Reply reply = ReplyFromCapture(Fixture("completion_stream.txt"));
  reply.fault = Reply::Fault::kTruncate;
  reply.truncate_at = 1000;
  server_.On("POST /completion", {reply});
  const std::string url = server_.base_url() + "/completion";
  absl::StatusOr<HttpResponse> response = client_->Send(Post(url, "{}"), [](std::string_view) { return true; });
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDataLoss) << response.status();
  EXPECT_THAT(std::string(response.status().message()),
              ::testing::StartsWith(absl::StrCat("POST ", url, ": truncated body: the connection closed after ")));
}

TEST_F(CurlHttpClientTest, ConnectionClosedWithoutAnswerIsUnavailable) {
  Reply reply;
  reply.fault = Reply::Fault::kCloseWithoutAnswer;
  server_.On("POST /completion", {reply});
  const std::string url = server_.base_url() + "/completion";
  absl::StatusOr<HttpResponse> response = client_->Send(Post(url, "{}"));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(response.status().message(), absl::StrCat("POST ", url, ": the server closed the connection without answering"));
}

TEST_F(CurlHttpClientTest, BadRequestsAreInvalidArguments) {
  HttpRequest request = Get("http://127.0.0.1:1/x");
  request.method = "DELETE";
  EXPECT_EQ(client_->Send(request).status().message(), "DELETE http://127.0.0.1:1/x: unsupported method");
  EXPECT_EQ(client_->Send(Get("gopher2://x/")).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace benchfleet::agent
