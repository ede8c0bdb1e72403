#include "coordinator/scheduler/cron.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/string_views.h"

namespace benchfleet::coordinator {
namespace {

struct FieldSpec {
  const char* name;
  int min;
  int max;
  const char* const* names;  // names[i] stands for min + i; nullptr when none
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

bool ParseValue(absl::string_view s, const FieldSpec& spec, int* out) {
  if (spec.names != nullptr) {
    const std::string lower = absl::AsciiStrToLower(s);
    const int count = spec.max - spec.min + 1 - (spec.max == 7 ? 1 : 0);
    for (int i = 0; i < count; ++i) {
      if (lower == spec.names[i]) {
        *out = spec.min + i;
        return true;
      }
    }
  }
  if (s.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) return false;
  return absl::SimpleAtoi(s, out) && *out >= spec.min && *out <= spec.max;
}

// Sets the bits of one field; *star says whether it was "*" (or "*/1"), for the day rule.
absl::Status ParseField(absl::string_view field, const FieldSpec& spec, std::vector<bool>* bits,
                        bool* star) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(spec.name, " field '", field, "': ", why));
  };
  *star = field == "*";
  for (absl::string_view item : absl::StrSplit(field, ',')) {
    if (item.empty()) return bad("an empty list item");
    absl::string_view range = item;
    int step = 1;
    const size_t slash = item.find('/');
    if (slash != absl::string_view::npos) {
      range = item.substr(0, slash);
      if (!absl::SimpleAtoi(item.substr(slash + 1), &step) || step < 1) {
        return bad(absl::StrCat("step '", item.substr(slash + 1), "' must be a whole number of at least 1"));
      }
    }
    int low = spec.min;
    int high = spec.max == 7 ? 6 : spec.max;
    if (range != "*") {
      const size_t dash = range.find('-');
      if (dash == absl::string_view::npos) {
        if (!ParseValue(range, spec, &low)) {
          return bad(absl::StrCat("'", range, "' is not a value from ", spec.min, " to ", spec.max));
        }
        // "5/15" means 5-max/15, as in Vixie cron.
        high = slash != absl::string_view::npos ? (spec.max == 7 ? 6 : spec.max) : low;
      } else {
        if (!ParseValue(range.substr(0, dash), spec, &low) || !ParseValue(range.substr(dash + 1), spec, &high)) {
          return bad(absl::StrCat("range '", range, "' must be two values from ", spec.min, " to ", spec.max));
        }
        if (high < low) return bad(absl::StrCat("range '", range, "' goes backwards"));
      }
    }
    for (int v = low; v <= high; v += step) (*bits)[v % (spec.max == 7 ? 7 : spec.max + 1)] = true;
    if (spec.max == 7 && high == 7) (*bits)[0] = true;  // 7 is Sunday too
  }
  return absl::OkStatus();
}

struct Civil {
  int year, month, day, hour, minute, weekday;
};

Civil ToCivil(absl::Time t) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const absl::TimeZone::CivilInfo info = utc.At(t);
  const absl::CivilSecond cs = info.cs;
  const absl::Weekday wd = absl::GetWeekday(absl::CivilDay(cs));
  // absl::Weekday starts at Monday = 0; cron's Sunday is 0.
  const int weekday = (static_cast<int>(wd) + 1) % 7;
  return Civil{static_cast<int>(cs.year()), cs.month(), cs.day(), cs.hour(), cs.minute(), weekday};
}

}  // namespace

absl::StatusOr<CronExpression> CronExpression::Parse(std::string_view text_in) {
  const absl::string_view text = absl::StripAsciiWhitespace(ToAbsl(text_in));
  const std::vector<absl::string_view> fields = absl::StrSplit(text, ' ', absl::SkipWhitespace());
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("cron '", text, "': ", why));
  };
  if (fields.size() != 5) {
    return bad(absl::StrCat("expected 5 fields (minute hour day-of-month month day-of-week, UTC), got ",
                            fields.size()));
  }
  static constexpr FieldSpec kSpecs[5] = {{"minute", 0, 59, nullptr},
                                          {"hour", 0, 23, nullptr},
                                          {"day-of-month", 1, 31, nullptr},
                                          {"month", 1, 12, kMonthNames},
                                          {"day-of-week", 0, 7, kDayNames}};
  CronExpression cron;
  cron.text_ = std::string(text);
  bool stars[5] = {};
  std::vector<bool> bits[5];
  for (int i = 0; i < 5; ++i) {
    bits[i].assign(kSpecs[i].max + 1, false);
    absl::Status status = ParseField(fields[i], kSpecs[i], &bits[i], &stars[i]);
    if (!status.ok()) return bad(status.message());
  }
  for (int v = 0; v < 60; ++v) cron.minutes_[v] = bits[0][v];
  for (int v = 0; v < 24; ++v) cron.hours_[v] = bits[1][v];
  for (int v = 1; v <= 31; ++v) cron.days_[v] = bits[2][v];
  for (int v = 1; v <= 12; ++v) cron.months_[v] = bits[3][v];
  for (int v = 0; v < 7; ++v) cron.weekdays_[v] = bits[4][v];
  cron.day_of_month_star_ = stars[2] || cron.days_.count() == 31;
  cron.day_of_week_star_ = stars[4] || cron.weekdays_.count() == 7;
  return cron;
}

bool CronExpression::DayMatches(int day_of_month, int weekday) const {
  const bool dom = days_[day_of_month];
  const bool dow = weekdays_[weekday];
  // Vixie cron: if either day field is "*", both must match (the "*" one always does); if both
  // are restricted, either may match.
  if (day_of_month_star_ || day_of_week_star_) return dom && dow;
  return dom || dow;
}

std::optional<absl::Time> CronExpression::NextAfter(absl::Time t) const {
  const absl::TimeZone utc = absl::UTCTimeZone();
  // The next whole minute after t.
  absl::CivilMinute m = absl::ToCivilMinute(t, utc) + 1;
  const absl::CivilMinute limit = m + 8 * 366 * 24 * 60;
  while (m < limit) {
    if (!months_[m.month()]) {
      m = absl::CivilMinute(absl::CivilMonth(m) + 1);
      continue;
    }
    const Civil c = ToCivil(absl::FromCivil(m, utc));
    if (!DayMatches(c.day, c.weekday)) {
      m = absl::CivilMinute(absl::CivilDay(m) + 1);
      continue;
    }
    if (!hours_[m.hour()]) {
      m = absl::CivilMinute(absl::CivilHour(m) + 1);
      continue;
    }
    if (!minutes_[m.minute()]) {
      m += 1;
      continue;
    }
    return absl::FromCivil(m, utc);
  }
  return std::nullopt;
}

std::optional<absl::Time> CronExpression::LatestIn(absl::Time after, absl::Time until) const {
  std::optional<absl::Time> latest;
  for (std::optional<absl::Time> s = NextAfter(after); s.has_value() && *s <= until; s = NextAfter(*s)) {
    latest = s;
  }
  return latest;
}

}  // namespace benchfleet::coordinator
