// The simulator's stderr log, in llama.cpp's format: `<m>.<ss>.<mmm>.<uuu> <L> <text>` with the
// time since start, a level letter (I, W, E) and the message, shown when its verbosity is at or
// below -lv (errors 1, warnings 2, the default info lines 3, the verbose info lines 4). Owner:
// tests/sim. Thread-safe: each line is written whole under a mutex.
#ifndef BENCHFLEET_TESTS_SIM_LLAMA_SERVER_SIM_LOG_H_
#define BENCHFLEET_TESTS_SIM_LLAMA_SERVER_SIM_LOG_H_

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

namespace benchfleet::sim {

// The verbosity a line needs to be shown.
inline constexpr int kLogError = 1;
inline constexpr int kLogWarn = 2;
inline constexpr int kLogInfo = 3;     // what llama-server prints by default
inline constexpr int kLogVerbose = 4;  // what it adds at -lv 4

class SimLog {
 public:
  // Times are measured from `start`. `log_file` ("" = none) gets the same lines.
  SimLog(int verbosity, std::chrono::steady_clock::time_point start, const std::string& log_file);
  ~SimLog();
  SimLog(const SimLog&) = delete;
  SimLog& operator=(const SimLog&) = delete;

  int verbosity() const { return verbosity_; }
  bool Shows(int level) const { return level <= verbosity_; }

  // Writes `text` as it is (llama-server prints a few lines before its logger starts).
  void Raw(const std::string& text);
  // Writes one line `<time> <letter> <text>` when `level` is shown; adds the newline.
  void Line(char letter, int level, const std::string& text);
  void Info(const std::string& text) { Line('I', kLogInfo, text); }
  void Verbose(const std::string& text) { Line('I', kLogVerbose, text); }
  void Warn(const std::string& text) { Line('W', kLogWarn, text); }
  void Error(const std::string& text) { Line('E', kLogError, text); }

  // Returns the timestamp llama.cpp prints for `elapsed` microseconds: "0.00.059.784".
  static std::string Timestamp(int64_t elapsed_us);

 private:
  void Write(const std::string& s);

  const int verbosity_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  FILE* file_ = nullptr;  // GUARDED_BY(mu_)
};

// printf into a std::string.
std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace benchfleet::sim

#endif  // BENCHFLEET_TESTS_SIM_LLAMA_SERVER_SIM_LOG_H_
