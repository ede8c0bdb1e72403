// The libcurl HttpClient: one easy handle (one connection) per request.
//
// libcurl is loaded with dlopen when the first client is made, not linked: its dependency chain
// (GnuTLS, Kerberos, LDAP, libssh2, librtmp, ...) is about 3.6 MB of resident library pages that
// an idle agent, which makes no HTTP request, should not carry. A backend makes its client when
// it is built, before any run, so the loading never falls inside a timed window.
#include <curl/curl.h>
#include <dlfcn.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/http/http_client.h"

namespace benchfleet::agent {
namespace {

// The libcurl functions this client calls, resolved from libcurl.so.4.
struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// Loads libcurl once per process; the same result (the API, or why it could not be loaded) for
// every caller. Thread-safe.
const absl::StatusOr<CurlApi>& LoadCurl() {
  static const absl::StatusOr<CurlApi>* api = [] {
    void* lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      return new absl::StatusOr<CurlApi>(absl::FailedPreconditionError(
          absl::StrCat("libcurl cannot be loaded (install Debian's libcurl4): ", ::dlerror())));
    }
    CurlApi a{};
    bool ok = true;
    auto bind = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
      ok = ok && fn != nullptr;
    };
    bind(a.global_init, "curl_global_init");
    bind(a.easy_init, "curl_easy_init");
    bind(a.easy_cleanup, "curl_easy_cleanup");
    bind(a.easy_setopt, "curl_easy_setopt");
    bind(a.easy_perform, "curl_easy_perform");
    bind(a.easy_getinfo, "curl_easy_getinfo");
    bind(a.easy_strerror, "curl_easy_strerror");
    bind(a.slist_append, "curl_slist_append");
    bind(a.slist_free_all, "curl_slist_free_all");
    if (!ok) {
      return new absl::StatusOr<CurlApi>(
          absl::FailedPreconditionError("libcurl.so.4 lacks a function this agent calls"));
    }
    a.global_init(CURL_GLOBAL_DEFAULT);
    return new absl::StatusOr<CurlApi>(a);
  }();
  return *api;
}

struct CurlDeleter {
  const CurlApi* api;
  void operator()(CURL* curl) const { api->easy_cleanup(curl); }
};
struct SlistDeleter {
  const CurlApi* api;
  void operator()(curl_slist* list) const { api->slist_free_all(list); }
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
    const absl::StatusOr<CurlApi>& loaded = LoadCurl();
    if (!loaded.ok()) return absl::Status(loaded.status().code(), absl::StrCat(what, ": ", loaded.status().message()));
    const CurlApi& api = *loaded;
    std::unique_ptr<CURL, CurlDeleter> curl(api.easy_init(), CurlDeleter{&api});
    if (curl == nullptr) return absl::InternalError(absl::StrCat(what, ": curl_easy_init failed"));
    CURL* h = curl.get();

    HttpResponse response;
    Transfer transfer{&response, &on_chunk};
    char error_buffer[CURL_ERROR_SIZE] = {};
    std::unique_ptr<curl_slist, SlistDeleter> headers(nullptr, SlistDeleter{&api});
    auto add_header = [&](const std::string& header) {
      headers.reset(api.slist_append(headers.release(), header.c_str()));
    };
    // A server that does not answer "100 Continue" would cost up to a second per request.
    add_header("Expect:");

    api.easy_setopt(h, CURLOPT_URL, request.url.c_str());
    api.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    api.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, Millis(request.connect_timeout));
    api.easy_setopt(h, CURLOPT_TIMEOUT_MS, Millis(request.total_timeout));
    api.easy_setopt(h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
    api.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    api.easy_setopt(h, CURLOPT_WRITEFUNCTION, &WriteBody);
    api.easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
    if (request.method == "POST") {
      api.easy_setopt(h, CURLOPT_POST, 1L);
      api.easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      api.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      add_header(absl::StrCat("Content-Type: ", request.content_type));
    }
    api.easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode code = api.easy_perform(h);
    if (code != CURLE_OK) return ErrorStatus(api, h, code, what, request, transfer, error_buffer);

    long status = 0;
    api.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
    char* content_type = nullptr;
    if (api.easy_getinfo(h, CURLINFO_CONTENT_TYPE, &content_type) == CURLE_OK && content_type != nullptr) {
      response.content_type = content_type;
    }
    return response;
  }

 private:
  static absl::Status ErrorStatus(const CurlApi& api, CURL* h, CURLcode code, const std::string& what, const HttpRequest& request,
                                  const Transfer& transfer, const char* error_buffer) {
    long os_errno = 0;
    api.easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    const std::string detail = error_buffer[0] != '\0' ? error_buffer : api.easy_strerror(code);
    switch (code) {
      case CURLE_COULDNT_CONNECT:
        return absl::UnavailableError(absl::StrCat(
            what, ": cannot connect: ", os_errno != 0 ? std::strerror(static_cast<int>(os_errno)) : detail));
      case CURLE_OPERATION_TIMEDOUT: {
        double connect_seconds = 0;
        api.easy_getinfo(h, CURLINFO_CONNECT_TIME, &connect_seconds);
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
        api.easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected);
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

std::string QuoteBody(std::string_view body) {
  constexpr size_t kQuoteBytes = 200;
  std::string out(body.substr(0, kQuoteBytes));
  if (body.size() > kQuoteBytes) out += "...";
  return out;
}

std::unique_ptr<HttpClient> NewCurlHttpClient() {
  LoadCurl();  // now, before any run; an error is reported by the first Send
  return std::make_unique<CurlHttpClient>();
}

}  // namespace benchfleet::agent
