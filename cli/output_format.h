// How the CLI prints runs and agents: an aligned table for people, CSV (the runs.csv form) and
// JSON lines (the proto3 JSON mapping) for tools. Pure functions; thread-safe.
#ifndef BENCHFLEET_CLI_OUTPUT_FORMAT_H_
#define BENCHFLEET_CLI_OUTPUT_FORMAT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/admin.pb.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::cli {

enum class Format { kTable, kCsv, kJson };

// Parses "table", "csv" or "json".
absl::StatusOr<Format> ParseFormat(const std::string& name);

absl::StatusOr<std::string> FormatRuns(const std::vector<v1::RunRecord>& runs, Format format);
absl::StatusOr<std::string> FormatAgents(const std::vector<v1::Machine>& agents, Format format);

// Lays out rows (the first is the header) in columns separated by two spaces.
std::string AlignColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_OUTPUT_FORMAT_H_
