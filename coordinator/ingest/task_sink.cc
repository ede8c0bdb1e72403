#include "coordinator/ingest/task_sink.h"

#include <utility>

namespace benchfleet::coordinator {

StreamTaskSink::StreamTaskSink(std::function<bool(v1::CoordinatorMessage)> send)
    : send_(std::move(send)) {}

bool StreamTaskSink::SendAssignment(const v1::TaskAssignment& assignment) {
  v1::CoordinatorMessage message;
  *message.mutable_assign_task() = assignment;
  return send_(std::move(message));
}

bool StreamTaskSink::SendCancel(const v1::TaskCancel& cancel) {
  v1::CoordinatorMessage message;
  *message.mutable_cancel_task() = cancel;
  return send_(std::move(message));
}

}  // namespace benchfleet::coordinator
