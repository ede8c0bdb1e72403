// StreamTaskSink: the scheduler's way down one agent's Connect stream. It wraps the stream's
// send function, so assignments and cancels are queued behind the Welcome and the Acks and
// written by the stream itself: the scheduler never waits on a slow agent. Created by AgentGatewayService after an accepted Hello; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_INGEST_TASK_SINK_H_
#define BENCHFLEET_COORDINATOR_INGEST_TASK_SINK_H_

#include <functional>

#include "benchfleet/v1/gateway.pb.h"
#include "coordinator/scheduler/scheduler.h"

namespace benchfleet::coordinator {

class StreamTaskSink final : public TaskSink {
 public:
  // `send` queues one message on the stream and returns false once the stream is gone.
  explicit StreamTaskSink(std::function<bool(v1::CoordinatorMessage)> send);

  bool SendAssignment(const v1::TaskAssignment& assignment) override;
  bool SendCancel(const v1::TaskCancel& cancel) override;

 private:
  const std::function<bool(v1::CoordinatorMessage)> send_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_TASK_SINK_H_
