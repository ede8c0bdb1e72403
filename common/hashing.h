// Content hashes and ids: SHA-256 for outputs, graphs and fingerprints; random UUIDs
// for run and agent ids. Thread-safe.
#ifndef BENCHFLEET_COMMON_HASHING_H_
#define BENCHFLEET_COMMON_HASHING_H_

#include <string>
#include <string_view>

namespace benchfleet {

// Returns the lower-case hex SHA-256 of data.
std::string Sha256Hex(std::string_view data);

// Returns a new random (version 4) UUID in its canonical 36-character form.
std::string NewUuid();

// Returns true when s is a UUID in canonical 8-4-4-4-12 hex form (either case).
bool IsUuid(std::string_view s);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_HASHING_H_
