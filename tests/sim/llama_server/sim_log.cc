#include "tests/sim/llama_server/sim_log.h"

#include <unistd.h>

#include <cstdarg>

namespace benchfleet::sim {

std::string Format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(n > 0 ? n : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

SimLog::SimLog(int verbosity, std::chrono::steady_clock::time_point start, const std::string& log_file)
    : verbosity_(verbosity), start_(start) {
  if (!log_file.empty()) file_ = std::fopen(log_file.c_str(), "a");
}

SimLog::~SimLog() {
  if (file_ != nullptr) std::fclose(file_);
}

std::string SimLog::Timestamp(int64_t us) {
  // common/log.cpp: minutes, seconds, milliseconds, microseconds.
  return Format("%d.%02d.%03d.%03d", static_cast<int>(us / 1000000 / 60),
                static_cast<int>(us / 1000000 % 60), static_cast<int>(us / 1000 % 1000),
                static_cast<int>(us % 1000));
}

void SimLog::Raw(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  Write(text);
}

void SimLog::Line(char letter, int level, const std::string& text) {
  if (!Shows(level)) return;
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::steady_clock::now() - start_)
                         .count();
  std::string line = Timestamp(us) + " " + letter + " " + text;
  if (line.empty() || line.back() != '\n') line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  Write(line);
}

void SimLog::Write(const std::string& s) {
  // One write(2) per line so that lines of concurrent requests never interleave, and nothing
  // is lost in a stdio buffer when the process aborts on purpose (--sim-fail die-on-request).
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(STDERR_FILENO, s.data() + off, s.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  if (file_ != nullptr) {
    std::fwrite(s.data(), 1, s.size(), file_);
    std::fflush(file_);
  }
}

}  // namespace benchfleet::sim
