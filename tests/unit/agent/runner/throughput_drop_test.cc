// THROUGHPUT_DROP on simulated series with known change points, fed to the tracker one record at
// a time as the runner does: the robust reference (median of the first three warm calls), one
// fast or slow outlier, no change, and the attribution to throttling, a clock fall or a busy host.
// Expected reasons and fractions were computed independently by a Python 3 re-implementation of
// the rule written from the header (the tracker's arithmetic with statistics.median, Pettitt's U by
// its double sum as in tests/unit/common/change_point_reference.py, '%.1f' figures, '%.2g' p).
#include "agent/runner/throughput_drop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kMetric[] = "predicted_per_second";
constexpr char kNoSamples[] = "unexplained: no device samples";

v1::RunRecord Warm(uint32_t call, double value) {
  v1::RunRecord record;
  record.set_phase(v1::PHASE_WARM);
  record.set_call_index(call);
  record.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  v1::Metric* metric = record.add_metrics();
  metric->set_name(kMetric);
  metric->set_value(value);
  metric->set_unit("tokens/s");
  return record;
}

// A warm call with what the device sampler adds: the samples, the mean SM clock, and a flag.
v1::RunRecord Sampled(uint32_t call, double value, double clock_mhz, const std::string& flag = "",
                      const std::string& reason = "") {
  v1::RunRecord record = Warm(call, value);
  v1::Metric* samples = record.add_metrics();
  samples->set_name("device_samples");
  samples->set_value(3);
  v1::Metric* clock = record.add_metrics();
  clock->set_name("device_sm_clock_mhz_mean");
  clock->set_value(clock_mhz);
  clock->set_unit("MHz");
  if (!flag.empty()) {
    v1::Flag* f = record.add_flags();
    f->set_code(flag);
    f->set_reason(reason);
  }
  return record;
}

struct Outcome {
  std::vector<v1::RunRecord> records;
  std::vector<uint32_t> flagged;  // call indices flagged THROUGHPUT_DROP
  std::vector<double> drops;
};

Outcome Track(std::vector<v1::RunRecord> records, double threshold = 0.15) {
  ThroughputDropTracker tracker(kMetric, threshold);
  Outcome out;
  for (v1::RunRecord& record : records) {
    if (auto drop = tracker.Observe(&record); drop.has_value()) {
      out.flagged.push_back(record.call_index());
      out.drops.push_back(*drop);
    }
  }
  out.records = std::move(records);
  return out;
}

Outcome TrackValues(const std::vector<double>& values) {
  std::vector<v1::RunRecord> records;
  for (size_t i = 0; i < values.size(); ++i) records.push_back(Warm(uint32_t(i + 1), values[i]));
  return Track(std::move(records));
}

std::string Reason(const v1::RunRecord& record, const std::string& code = kThroughputDropFlag) {
  for (const v1::Flag& flag : record.flags()) {
    if (flag.code() == code) return flag.reason();
  }
  return "(no " + code + ")";
}

TEST(ThroughputDropTest, TheSeedsCollapseIsFlaggedFromCallThreeWithTheChangeNamed) {
  const Outcome out = TrackValues({52.9, 52.9, 30.0, 28.2});
  EXPECT_THAT(out.flagged, ElementsAre(3u, 4u));
  EXPECT_EQ(Reason(out.records[2]),
            absl::StrCat("predicted_per_second 30.0 is 43.3% below the reference 52.9, the median of warm calls 1-3 "
                         "(threshold 15%); the level fell from 52.9 to 30.0 at warm call 3 (Pettitt p=1 over 3 warm "
                         "calls, not significant at 5%); ",
                         kNoSamples));
  EXPECT_EQ(Reason(out.records[3]),
            absl::StrCat("predicted_per_second 28.2 is 46.7% below the reference 52.9, the median of warm calls 1-3 "
                         "(threshold 15%); the level fell from 52.9 to 29.1 at warm call 3 (Pettitt p=0.6 over 4 warm "
                         "calls, not significant at 5%); ",
                         kNoSamples));
  EXPECT_NEAR(out.drops[1], 0.4669187145557656, 1e-12);  // (52.9 - 28.2) / 52.9
  EXPECT_EQ(CauseOfDrop(out.records[3]), DropCause::kUnexplained);
}

TEST(ThroughputDropTest, ACallBeforeTheReferenceIsCompleteIsNeverFlagged) {
  // Warm call 2 is 43% below call 1, but the reference does not exist yet when it is made.
  const Outcome out = TrackValues({52.9, 30.0});
  EXPECT_THAT(out.flagged, IsEmpty());
  EXPECT_EQ(out.records[1].flags_size(), 0);
}

TEST(ThroughputDropTest, AFastFirstCallFlagsNothing) {
  // Judged against warm call 1 alone, all nine later calls were 33% or more below it.
  const Outcome out = TrackValues({80.0, 52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 53.2, 52.5, 53.3});
  EXPECT_THAT(out.flagged, IsEmpty());
}

TEST(ThroughputDropTest, ASlowFirstCallHidesNoLaterDrop) {
  // Warm call 1 alone as the reference would have hidden calls 5 and 6 (they are not below 30.0).
  const Outcome out = TrackValues({30.0, 52.9, 52.9, 52.9, 30.0, 29.0});
  EXPECT_THAT(out.flagged, ElementsAre(5u, 6u));
  EXPECT_EQ(Reason(out.records[4]),
            absl::StrCat("predicted_per_second 30.0 is 43.3% below the reference 52.9, the median of warm calls 1-3 "
                         "(threshold 15%); no fall of level found over 5 warm calls (Pettitt p=1, not significant at "
                         "5%); ",
                         kNoSamples));
  EXPECT_EQ(Reason(out.records[5]),
            absl::StrCat("predicted_per_second 29.0 is 45.2% below the reference 52.9, the median of warm calls 1-3 "
                         "(threshold 15%); the level fell from 52.9 to 29.5 at warm call 5 (Pettitt p=0.62 over 6 "
                         "warm calls, not significant at 5%); ",
                         kNoSamples));
}

TEST(ThroughputDropTest, OneSlowCallFlagsItselfOnly) {
  const Outcome out = TrackValues({52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 30.0, 53.2, 52.5, 53.3});
  EXPECT_THAT(out.flagged, ElementsAre(7u));
  EXPECT_EQ(Reason(out.records[6]),
            absl::StrCat("predicted_per_second 30.0 is 43.3% below the reference 52.9, the median of warm calls 1-3 "
                         "(threshold 15%); the level fell from 52.8 to 30.0 at warm call 7 (Pettitt p=0.43 over 7 "
                         "warm calls, not significant at 5%); ",
                         kNoSamples));
}

TEST(ThroughputDropTest, NoisyCallsWithoutAChangeFlagNothing) {
  // Within +-4% of 52: the largest fall below the reference (52.9) is 5.9%.
  const Outcome out = TrackValues({52.9, 50.1, 54.0, 51.2, 53.5, 49.8, 52.2, 50.6, 53.9, 51.0});
  EXPECT_THAT(out.flagged, IsEmpty());
}

TEST(ThroughputDropTest, AStepAtCallSevenIsNamedThereAndBecomesSignificant) {
  const Outcome out = TrackValues({52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 29.1, 28.8, 29.4, 28.9, 29.0, 29.3});
  EXPECT_THAT(out.flagged, ElementsAre(7u, 8u, 9u, 10u, 11u, 12u));
  EXPECT_EQ(Reason(out.records[6]),
            absl::StrCat("predicted_per_second 29.1 is 45.0% below the reference 52.9, the median of warm calls 1-3 "
                         "(threshold 15%); the level fell from 52.8 to 29.1 at warm call 7 (Pettitt p=0.43 over 7 "
                         "warm calls, not significant at 5%); ",
                         kNoSamples));
  EXPECT_EQ(Reason(out.records[10]),
            absl::StrCat("predicted_per_second 29.0 is 45.2% below the reference 52.9, the median of warm calls 1-3 "
                         "(threshold 15%); the level fell from 52.8 to 29.0 at warm call 7 (Pettitt p=0.049 over 11 "
                         "warm calls, significant at 5%); ",
                         kNoSamples));
  EXPECT_EQ(Reason(out.records[11]),
            absl::StrCat("predicted_per_second 29.3 is 44.6% below the reference 52.9, the median of warm calls 1-3 "
                         "(threshold 15%); the level fell from 52.8 to 29.1 at warm call 7 (Pettitt p=0.031 over 12 "
                         "warm calls, significant at 5%); ",
                         kNoSamples));
}

TEST(ThroughputDropTest, FailedColdAndCacheHitRunsAreNotJudgedAndTheReferenceSaysWhichCalls) {
  std::vector<v1::RunRecord> records = {Warm(1, 50), Warm(2, 99), Warm(3, 52), Warm(4, 48), Warm(5, 40)};
  records[1].mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  v1::RunRecord cold = Warm(1, 10);
  cold.set_phase(v1::PHASE_COLD);
  v1::RunRecord cached = Warm(6, 500);
  cached.add_flags()->set_code(kCacheHitFlag);
  records.insert(records.begin(), cold);
  records.push_back(cached);
  const Outcome out = Track(std::move(records));
  EXPECT_THAT(out.flagged, ElementsAre(5u));
  EXPECT_EQ(Reason(out.records[5]),
            absl::StrCat("predicted_per_second 40.0 is 20.0% below the reference 50.0, the median of warm calls 1, 3, "
                         "4 (threshold 15%); the level fell from 50.0 to 40.0 at warm call 5 (Pettitt p=0.6 over 4 "
                         "warm calls, not significant at 5%); ",
                         kNoSamples));
}

TEST(ThroughputDropTest, AThrottledDeviceIsNamedWithItsClockFall) {
  const std::string reasons = "nvidia:0 clocks event reasons sw_power_cap in 3 of 3 samples";
  const Outcome out = Track({Sampled(1, 52.9, 1410), Sampled(2, 52.9, 1410), Sampled(3, 30.0, 1005, "THROTTLED", reasons),
                             Sampled(4, 28.2, 1005, "THROTTLED", reasons)});
  EXPECT_THAT(out.flagged, ElementsAre(3u, 4u));
  // The reference clock is the median of calls 1-3 (1410, 1410, 1005): 1410.
  EXPECT_EQ(Reason(out.records[3]),
            "predicted_per_second 28.2 is 46.7% below the reference 52.9, the median of warm calls 1-3 (threshold "
            "15%); the level fell from 52.9 to 29.1 at warm call 3 (Pettitt p=0.6 over 4 warm calls, not significant "
            "at 5%); the device throttled (SM clock 1410 -> 1005 MHz, nvidia:0 clocks event reasons sw_power_cap in 3 "
            "of 3 samples)");
  EXPECT_EQ(CauseOfDrop(out.records[3]), DropCause::kThrottled);
  // The sampler's own THROTTLED flag is left as it was: one flag, its reason.
  EXPECT_EQ(out.records[3].flags_size(), 2);
  EXPECT_EQ(Reason(out.records[3], "THROTTLED"), reasons);
}

TEST(ThroughputDropTest, AClockFallWithoutAThrottleReasonIsFlaggedThrottled) {
  // The clock of call 4 is 28.7% below the reference calls' median (1410); call 5's 1300 is 7.8%
  // below, under the 10% of kClockFallFraction: its drop stays unexplained.
  const Outcome out = Track({Sampled(1, 52.9, 1410), Sampled(2, 52.9, 1410), Sampled(3, 52.9, 1410),
                             Sampled(4, 30.0, 1005), Sampled(5, 30.0, 1300)});
  EXPECT_THAT(out.flagged, ElementsAre(4u, 5u));
  EXPECT_EQ(Reason(out.records[3], "THROTTLED"),
            "SM clock 1410 -> 1005 MHz (mean during the run vs the median of the reference warm calls), more than 10% "
            "down with no throttle reason reported");
  EXPECT_THAT(Reason(out.records[3]), ::testing::EndsWith("; the device throttled (SM clock 1410 -> 1005 MHz)"));
  EXPECT_EQ(CauseOfDrop(out.records[3]), DropCause::kThrottled);
  EXPECT_THAT(Reason(out.records[4]),
              ::testing::EndsWith("; unexplained: the device samples show no throttling and no clock fall"));
  EXPECT_EQ(CauseOfDrop(out.records[4]), DropCause::kUnexplained);
}

TEST(ThroughputDropTest, OnABusyHostTheDropBlamesTheHostNotTheDevice) {
  const std::string busy = "other processes on the nvidia device(s) during the run: pid 4242 python3 (512 MiB)";
  const Outcome out = Track({Sampled(1, 52.9, 1410), Sampled(2, 52.9, 1410), Sampled(3, 52.9, 1410),
                             Sampled(4, 30.0, 1410, "CONTENDED", busy)});
  EXPECT_THAT(out.flagged, ElementsAre(4u));
  EXPECT_THAT(Reason(out.records[3]),
              ::testing::EndsWith(absl::StrCat("; the host was busy (CONTENDED: ", busy,
                                               "), not a slowdown of the device")));
  EXPECT_EQ(CauseOfDrop(out.records[3]), DropCause::kContended);
}

TEST(ThroughputDropTest, ADisabledMetricFlagsNothing) {
  ThroughputDropTracker tracker("", 0.15);
  for (uint32_t call = 1; call <= 4; ++call) {
    v1::RunRecord record = Warm(call, call < 3 ? 52.9 : 10);
    EXPECT_EQ(tracker.Observe(&record), std::nullopt);
  }
}

}  // namespace
}  // namespace benchfleet::agent
