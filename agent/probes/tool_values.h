// Small parsers shared by the probes: one CSV line of nvidia-smi, a number with or without its
// unit, the placeholders tools print for a missing value ("[N/A]", "[Not Supported]"). Pure
// functions; thread-safe.
#ifndef BENCHFLEET_AGENT_PROBES_TOOL_VALUES_H_
#define BENCHFLEET_AGENT_PROBES_TOOL_VALUES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace benchfleet::agent {

// Splits one line on ',' and trims each field (nvidia-smi quotes nothing; names hold no comma).
std::vector<std::string> SplitCsvFields(std::string_view line);

// Returns the lines of text, trimmed, without empty ones (and without a '\r').
std::vector<std::string> NonEmptyLines(std::string_view text);

// True for the placeholders a tool prints instead of a value: "[N/A]", "N/A", "[Not Supported]",
// "Not Supported", "[Unknown Error]", "[GPU is lost]", "[Insufficient Permissions]",
// "[Not Found]" (a process name nvidia-smi cannot see from a container), "", "-".
bool IsMissingValue(std::string_view value);

// Parses a decimal number, ignoring a unit after it ("143771 MiB", "78.38 W", "1700Mhz",
// "(1700Mhz)", "35.0"). nullopt for a placeholder or anything else (hex, inf, trailing digits).
std::optional<double> ParseNumber(std::string_view value);

// Parses a hexadecimal bitmask such as "0x0000000000000001". nullopt for anything else.
std::optional<uint64_t> ParseHexMask(std::string_view value);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_TOOL_VALUES_H_
