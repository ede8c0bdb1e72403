// CRC-32C (Castagnoli, as iSCSI and ext4 use it: RFC 3720 B.4), table-driven. Debian bookworm's
// Abseil (20220623) has no absl/crc yet, so it is written here. The agent's outbox checks every
// record it stored with it. Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_CRC32C_H_
#define BENCHFLEET_COMMON_CRC32C_H_

#include <cstdint>
#include <string_view>

namespace benchfleet {

// Returns the CRC-32C of data.
uint32_t Crc32c(std::string_view data);

// Returns the CRC-32C of A followed by data, given crc = Crc32c(A): Crc32cExtend(Crc32c(a), b)
// == Crc32c(a + b), so a checksum can cover two pieces without copying them together.
uint32_t Crc32cExtend(uint32_t crc, std::string_view data);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_CRC32C_H_
