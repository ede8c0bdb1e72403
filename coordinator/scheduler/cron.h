// CronExpression: the standard 5-field cron schedule, in UTC ("minute hour day-of-month month
// day-of-week"): *, lists (1,15), ranges (1-5), steps (*/10, 8-18/2), month and day names (jan,
// mon), 7 as Sunday, and Vixie cron's rule that when both day fields are restricted a day matches
// if either does. Used by the Scheduler for schedules. Immutable after Parse; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_SCHEDULER_CRON_H_
#define BENCHFLEET_COORDINATOR_SCHEDULER_CRON_H_

#include <bitset>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::coordinator {

class CronExpression {
 public:
  // INVALID_ARGUMENT "cron 'TEXT': FIELD field: reason" for anything else.
  static absl::StatusOr<CronExpression> Parse(std::string_view text);

  // Returns the first slot (a whole minute, UTC) strictly after t; nullopt when none comes within
  // eight years (e.g. "0 0 30 2 *").
  std::optional<absl::Time> NextAfter(absl::Time t) const;

  // Returns the latest slot s with after < s <= until; nullopt when there is none.
  std::optional<absl::Time> LatestIn(absl::Time after, absl::Time until) const;

  const std::string& text() const { return text_; }

 private:
  bool DayMatches(int day_of_month, int weekday) const;

  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;    // 1..31
  std::bitset<13> months_;  // 1..12
  std::bitset<7> weekdays_;  // 0 = Sunday
  bool day_of_month_star_ = false;
  bool day_of_week_star_ = false;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_SCHEDULER_CRON_H_
