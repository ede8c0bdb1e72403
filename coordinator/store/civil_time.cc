#include "coordinator/store/civil_time.h"

namespace benchfleet::coordinator {
namespace {

void AppendDigits(int64_t value, int width, std::string* out) {
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 || n < width);
  while (n > 0) out->push_back(buf[--n]);
}

}  // namespace

CivilSecond ToCivilSecond(int64_t unix_seconds) {
  // Howard Hinnant's days-to-civil algorithm (public domain).
  int64_t days = unix_seconds / 86400;
  int64_t rest = unix_seconds % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  CivilSecond t;
  t.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  t.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  t.year = yoe + era * 400 + (t.month <= 2 ? 1 : 0);
  t.hour = static_cast<int>(rest / 3600);
  t.minute = static_cast<int>(rest / 60 % 60);
  t.second = static_cast<int>(rest % 60);
  return t;
}

void AppendCivilSecond(const CivilSecond& t, char separator, std::string* out) {
  AppendDigits(t.year, 4, out);
  out->push_back('-');
  AppendDigits(t.month, 2, out);
  out->push_back('-');
  AppendDigits(t.day, 2, out);
  out->push_back(separator);
  AppendDigits(t.hour, 2, out);
  out->push_back(':');
  AppendDigits(t.minute, 2, out);
  out->push_back(':');
  AppendDigits(t.second, 2, out);
}

void AppendJsonFraction(int32_t nanos, std::string* out) {
  if (nanos == 0) return;
  out->push_back('.');
  if (nanos % 1000000 == 0) {
    AppendDigits(nanos / 1000000, 3, out);
  } else if (nanos % 1000 == 0) {
    AppendDigits(nanos / 1000, 6, out);
  } else {
    AppendDigits(nanos, 9, out);
  }
}

}  // namespace benchfleet::coordinator
