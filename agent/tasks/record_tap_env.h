// RecordTapEnv: an Env that forwards everything to another one and, when the series runner
// appends records to one series folder's runs.jsonl, hands each record to a callback once its
// line is synced. The task executor reports progress after every run this way: the series
// runner (agent/runner/) has no per-record hook of its own, and the folder is where each record
// becomes durable first. Owned by the TaskExecutor, one per task; the callback is called on the
// thread that syncs the file (the runner's).
#ifndef BENCHFLEET_AGENT_TASKS_RECORD_TAP_ENV_H_
#define BENCHFLEET_AGENT_TASKS_RECORD_TAP_ENV_H_

#include <functional>
#include <memory>
#include <string>

#include "benchfleet/v1/record.pb.h"
#include "common/env.h"

namespace benchfleet::agent {

class RecordTapEnv : public EnvWrapper {
 public:
  // jsonl_path: the runs.jsonl to watch (other files pass through untouched).
  RecordTapEnv(Env* target, std::string jsonl_path, std::function<void(const v1::RunRecord&)> on_record)
      : EnvWrapper(target), jsonl_path_(std::move(jsonl_path)), on_record_(std::move(on_record)) {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override;

 private:
  const std::string jsonl_path_;
  const std::function<void(const v1::RunRecord&)> on_record_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_TASKS_RECORD_TAP_ENV_H_
