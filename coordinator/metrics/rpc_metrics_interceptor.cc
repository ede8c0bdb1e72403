#include "coordinator/metrics/rpc_metrics_interceptor.h"

#include <google/protobuf/descriptor.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace benchfleet::coordinator {
namespace {

using grpc::experimental::InterceptionHookPoints;

// One per call (gRPC creates it with the call and deletes it after the call ends).
class RpcMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(const char* method, CoordinatorMetrics* metrics)
      : method_(method == nullptr ? "" : method), metrics_(metrics) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    // gRPC 1.51 has no POST_SEND_STATUS hook: the status is read (and the call counted) as it
    // goes out. A sync server sends one for every call, cancelled ones included (the handler
    // still returns), so each call counts exactly once.
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_->RpcHandled(method_, StatusCodeName(methods->GetSendStatus().error_code()));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  CoordinatorMetrics* const metrics_;
};

class RpcMetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  RpcMetricsInterceptorFactory(CoordinatorMetrics* metrics, std::set<std::string> self_reported)
      : metrics_(metrics), self_reported_(std::move(self_reported)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    // No interceptor at all (nullptr) leaves the call on gRPC's plain path.
    if (info->method() != nullptr && self_reported_.count(info->method()) > 0) return nullptr;
    return new RpcMetricsInterceptor(info->method(), metrics_);
  }

 private:
  CoordinatorMetrics* const metrics_;
  const std::set<std::string> self_reported_;
};

}  // namespace

std::string_view StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN";
  }
}

std::vector<std::string> MethodsOfServices(const std::vector<std::string>& service_full_names) {
  std::vector<std::string> methods;
  const google::protobuf::DescriptorPool* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const std::string& name : service_full_names) {
    const google::protobuf::ServiceDescriptor* service = pool->FindServiceByName(name);
    if (service == nullptr) continue;
    for (int i = 0; i < service->method_count(); ++i) {
      methods.push_back(absl::StrCat("/", service->full_name(), "/", service->method(i)->name()));
    }
  }
  return methods;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewRpcMetricsInterceptorFactory(
    CoordinatorMetrics* metrics, std::set<std::string> self_reported) {
  return std::make_unique<RpcMetricsInterceptorFactory>(metrics, std::move(self_reported));
}

}  // namespace benchfleet::coordinator
