// Conversions between std::string_view and Debian's Abseil absl::string_view, which is its own
// type there (not an alias of std::string_view) and so never converts implicitly. Thread-safe.
#ifndef BENCHFLEET_COMMON_STRING_VIEWS_H_
#define BENCHFLEET_COMMON_STRING_VIEWS_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace benchfleet {

inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_STRING_VIEWS_H_
