#include "coordinator/log.h"

#include <cstdio>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace benchfleet::coordinator {

void Log(std::string_view message) {
  static std::mutex* mu = new std::mutex();
  // Log lines carry the real wall time even when a component runs on a simulated clock.
  const std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                   " benchfleet-coordinator: ", absl::string_view(message.data(), message.size()), "\n");
  std::lock_guard<std::mutex> lock(*mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace benchfleet::coordinator
