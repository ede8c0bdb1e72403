#include "common/matrix_order.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

namespace benchfleet {
namespace {

// The value of a plain decimal number, nullopt for anything else ("inf", "0x10", " 4", "4 GB").
std::optional<double> Number(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  size_t i = 0;
  if (text[i] == '+' || text[i] == '-') ++i;
  size_t digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exponent = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++exponent;
    if (exponent == 0) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  const std::string copy(text);
  errno = 0;
  const double value = std::strtod(copy.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(value)) return std::nullopt;
  return value;
}

struct Pair {
  std::string_view name, value;
};

std::vector<Pair> Split(std::string_view matrix) {
  std::vector<Pair> out;
  while (!matrix.empty()) {
    const size_t end = matrix.find(';');
    const std::string_view part = matrix.substr(0, end);
    const size_t eq = part.find('=');
    out.push_back(eq == std::string_view::npos ? Pair{part, {}} : Pair{part.substr(0, eq), part.substr(eq + 1)});
    if (end == std::string_view::npos) break;
    matrix.remove_prefix(end + 1);
  }
  return out;
}

template <typename A, typename B>
bool PairsLess(const A& a, const B& b) {
  auto ia = a.begin();
  auto ib = b.begin();
  for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
    const std::string_view na = ia->first, nb = ib->first;
    if (na != nb) return na < nb;
    const std::string_view va = ia->second, vb = ib->second;
    if (va != vb) return MatrixValueLess(va, vb);
  }
  return ia == a.end() && ib != b.end();
}

}  // namespace

bool MatrixValueLess(std::string_view a, std::string_view b) {
  const std::optional<double> na = Number(a);
  const std::optional<double> nb = Number(b);
  if (na.has_value() && nb.has_value() && *na != *nb) return *na < *nb;
  if (na.has_value() != nb.has_value()) return na.has_value();
  return a < b;
}

bool MatrixStringLess(std::string_view a, std::string_view b) {
  std::vector<std::pair<std::string_view, std::string_view>> pa, pb;
  for (const Pair& p : Split(a)) pa.emplace_back(p.name, p.value);
  for (const Pair& p : Split(b)) pb.emplace_back(p.name, p.value);
  return PairsLess(pa, pb);
}

bool MatrixLess(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b) {
  return PairsLess(a, b);
}

}  // namespace benchfleet
