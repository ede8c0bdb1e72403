// The libcurl HttpClient: one easy handle (one connection) per request.
#include <curl/curl.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/http/http_client.h"

namespace benchfleet::agent {
namespace {

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

struct Transfer {
  HttpResponse* response;
  const ChunkCallback* on_chunk;
  bool aborted = false;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t n = size * count;
  transfer->response->body.append(data, n);
  if (*transfer->on_chunk && !(*transfer->on_chunk)(std::string_view(data, n))) {
    transfer->aborted = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  return n;
}

long Millis(absl::Duration d) {
  const int64_t ms = absl::ToInt64Milliseconds(d);
  return ms <= 0 ? 1 : static_cast<long>(ms);
}

class CurlHttpClient : public HttpClient {
 public:
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request, const ChunkCallback& on_chunk) override {
    const std::string what = absl::StrCat(request.method, " ", request.url);
    if (request.method != "GET" && request.method != "POST") {
      return absl::InvalidArgumentError(absl::StrCat(what, ": unsupported method"));
    }
    std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
    if (curl == nullptr) return absl::InternalError(absl::StrCat(what, ": curl_easy_init failed"));
    CURL* h = curl.get();

    HttpResponse response;
    Transfer transfer{&response, &on_chunk};
    char error_buffer[CURL_ERROR_SIZE] = {};
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    auto add_header = [&](const std::string& header) {
      headers.reset(curl_slist_append(headers.release(), header.c_str()));
    };
    // A server that does not answer "100 Continue" would cost up to a second per request.
    add_header("Expect:");

    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, Millis(request.connect_timeout));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, Millis(request.total_timeout));
    curl_easy_setopt(h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &WriteBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
    if (request.method == "POST") {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      add_header(absl::StrCat("Content-Type: ", request.content_type));
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode code = curl_easy_perform(h);
    if (code != CURLE_OK) return ErrorStatus(h, code, what, request, transfer, error_buffer);

    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
    char* content_type = nullptr;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &content_type) == CURLE_OK && content_type != nullptr) {
      response.content_type = content_type;
    }
    return response;
  }

 private:
  static absl::Status ErrorStatus(CURL* h, CURLcode code, const std::string& what, const HttpRequest& request,
                                  const Transfer& transfer, const char* error_buffer) {
    long os_errno = 0;
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    const std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    switch (code) {
      case CURLE_COULDNT_CONNECT:
        return absl::UnavailableError(absl::StrCat(
            what, ": cannot connect: ", os_errno != 0 ? std::strerror(static_cast<int>(os_errno)) : detail));
      case CURLE_OPERATION_TIMEDOUT: {
        double connect_seconds = 0;
        curl_easy_getinfo(h, CURLINFO_CONNECT_TIME, &connect_seconds);
        if (connect_seconds <= 0) {
          return absl::DeadlineExceededError(
              absl::StrCat(what, ": cannot connect within ", absl::FormatDuration(request.connect_timeout)));
        }
        return absl::DeadlineExceededError(absl::StrCat(what, ": no complete answer within ",
                                                        absl::FormatDuration(request.total_timeout), " (",
                                                        transfer.response->body.size(), " bytes of body received)"));
      }
      case CURLE_PARTIAL_FILE: {
        curl_off_t expected = -1;
        curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected);
        const size_t got = transfer.response->body.size();
        return absl::DataLossError(
            expected >= 0
                ? absl::StrCat(what, ": truncated body: the connection closed after ", got, " of ", expected, " bytes")
                : absl::StrCat(what, ": truncated body: the connection closed after ", got, " bytes"));
      }
      case CURLE_GOT_NOTHING:
        return absl::UnavailableError(absl::StrCat(what, ": the server closed the connection without answering"));
      case CURLE_RECV_ERROR:
      case CURLE_SEND_ERROR:
        return absl::UnavailableError(absl::StrCat(
            what, ": connection lost: ", os_errno != 0 ? std::strerror(static_cast<int>(os_errno)) : detail));
      case CURLE_WRITE_ERROR:
        if (transfer.aborted) return absl::CancelledError(absl::StrCat(what, ": aborted by the reader"));
        break;
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return absl::InvalidArgumentError(absl::StrCat(what, ": ", detail));
      default:
        break;
    }
    return absl::InternalError(absl::StrCat(what, ": ", detail, " (curl error ", static_cast<int>(code), ")"));
  }
};

}  // namespace

std::unique_ptr<HttpClient> NewCurlHttpClient() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  return std::make_unique<CurlHttpClient>();
}

}  // namespace benchfleet::agent
