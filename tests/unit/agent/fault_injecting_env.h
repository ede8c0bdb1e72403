// FaultInjectingEnv: an EnvWrapper for the agent's tests that fails chosen calls on demand
// ("disk full" on append, a failing fsync or ftruncate, a file that cannot be removed), on files whose path
// contains a given text, and counts syncs. Thread-safe (the outbox calls it from several threads).
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_FAULT_INJECTING_ENV_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_FAULT_INJECTING_ENV_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "common/env.h"

namespace benchfleet::agent::testing {

enum class FaultOp { kAppend, kSync, kRemove, kAtomicWrite, kTruncate };

struct Fault {
  // Only paths containing this fail ("" matches every path).
  std::string path_contains;
  absl::Status status = absl::ResourceExhaustedError("No space left on device (injected)");
  // For kAppend: bytes of the data that reach the file before the failure (a torn write).
  size_t partial_bytes = 0;
  // How many calls fail before the fault heals by itself; -1 is until Clear().
  int times = -1;
};

class FaultInjectingEnv : public EnvWrapper {
 public:
  explicit FaultInjectingEnv(Env* target) : EnvWrapper(target) {}

  void Inject(FaultOp op, Fault fault);
  void Clear();

  // Returns how many Sync() calls reached files whose path contains path_contains.
  int syncs(const std::string& path_contains);

  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override;
  absl::Status WriteFileAtomically(const std::string& path, std::string_view content) override;
  absl::Status RemoveFile(const std::string& path) override;

  // Returns the fault to apply to op on path now (consuming one of its times), or nullptr.
  std::unique_ptr<Fault> Take(FaultOp op, const std::string& path);
  void CountSync(const std::string& path);

 private:
  std::mutex mu_;
  std::map<FaultOp, Fault> faults_;
  std::map<std::string, int> syncs_by_path_;
};

}  // namespace benchfleet::agent::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_FAULT_INJECTING_ENV_H_
