// The order of matrix values and combinations for people (the guide's tables, listings): values
// that are numbers sort as numbers (concurrency 4 before 16), other values bytewise, numbers
// before words. The runner itself runs combinations in the spec's order (agent/runner/matrix.h);
// this is for whoever sorts them afterwards. Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_MATRIX_ORDER_H_
#define BENCHFLEET_COMMON_MATRIX_ORDER_H_

#include <map>
#include <string>
#include <string_view>

namespace benchfleet {

// True when a sorts before b: both numbers (an optional sign, digits, an optional fraction and
// exponent: "4", "16", "0.5", "1e3") by value, a number before a non-number, else bytewise.
// Equal numbers written differently ("8", "8.0") fall back to bytewise, so the order is total.
bool MatrixValueLess(std::string_view a, std::string_view b);

// True when a sorts before b, for matrices written "axis=value;axis=value" with the axes sorted
// by name (a record's matrix as runs.csv and the guide write it): axis by axis, names bytewise,
// values by MatrixValueLess; a prefix first.
bool MatrixStringLess(std::string_view a, std::string_view b);

// The same for a combination as a map of axis to value (agent/backends/backend.h Combination).
bool MatrixLess(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b);

// A comparator for ordered containers of "axis=value;..." strings.
struct MatrixStringOrder {
  using is_transparent = void;  // looks up string_views without copying them
  bool operator()(std::string_view a, std::string_view b) const { return MatrixStringLess(a, b); }
};

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_MATRIX_ORDER_H_
