// What every reader of a non-benchfleet file shares: a record stamped with its file:line and a
// run id derived from them, and per-(task, mode, phase) call numbering. Internal to readers/.
#ifndef BENCHFLEET_SYNTHESIS_READERS_FILE_RECORD_H_
#define BENCHFLEET_SYNTHESIS_READERS_FILE_RECORD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::synthesis {

// Returns a UUID-shaped id from sha256(path + ":" + line), with "#" + part appended when one line
// gives several records (llama-bench samples). Re-reading a file gives the same ids.
std::string FileRunId(const std::string& path, uint32_t line, int part = -1);

// Returns a record with run_id, provenance KIND_FILE (path, line), backend, status OK, phase WARM.
v1::RunRecord NewFileRecord(const std::string& path, uint32_t line, const std::string& backend,
                            int part = -1);

void AddMetric(v1::RunRecord* record, const std::string& name, double value, const std::string& unit);

// Numbers calls 1, 2, ... in file order per (task, mode, phase, matrix).
class CallCounter {
 public:
  uint32_t Next(const v1::RunRecord& record);

 private:
  std::map<std::string, uint32_t> next_;
};

// Splits text into lines without their "\r\n" / "\n".
std::vector<std::string_view> SplitLines(std::string_view text);

std::string_view Trim(std::string_view s);

std::optional<double> ParseDouble(std::string_view s);

// Splits one CSV line (RFC 4180 quoting, no embedded newlines). nullopt on an unclosed quote.
std::optional<std::vector<std::string>> SplitCsvLine(std::string_view line);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_READERS_FILE_RECORD_H_
