// runs.warm.until in the series spec: the map form beside the count, its defaults, every refusal
// with its key and line, and the schema's description of it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/spec/series_spec.h"
#include "common/stats/spread.h"

namespace benchfleet {
namespace {

constexpr char kSource[] = "spec.yaml";
constexpr char kHead[] = "series: s1\ntask: t1\nbackend: fake\n";  // lines 1-3

void ExpectInvalid(const std::string& yaml, const std::string& message) {
  const absl::Status s = ParseSeriesSpec(yaml, kSource).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), message);
}

TEST(WarmUntilSpecTest, TheFlowFormGivesTheBoundsAndMaxWarmRuns) {
  auto spec = ParseSeriesSpec(absl::StrCat(kHead, "runs:\n  cold: 1\n  warm: {until: {ci_halfwidth: 2%, max: 30}}\n"),
                              kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->runs.warm_until.has_value());
  EXPECT_DOUBLE_EQ(spec->runs.warm_until->ci_halfwidth, 0.02);
  EXPECT_EQ(spec->runs.warm_until->min, stats::kMinRunsForSpread);
  EXPECT_EQ(spec->runs.warm_until->max, 30);
  EXPECT_EQ(spec->runs.warm_until->line, 6);
  // What counts runs (the task's runs_total) reads the most warm calls.
  EXPECT_EQ(spec->runs.warm, 30);
  EXPECT_EQ(spec->runs.cold, 1);
}

TEST(WarmUntilSpecTest, TheBlockFormWithMinAndAFractionalPercentage) {
  auto spec = ParseSeriesSpec(absl::StrCat(kHead,
                                           "runs:\n"
                                           "  warm:\n"
                                           "    until:\n"
                                           "      ci_halfwidth: 0.5%\n"
                                           "      min: 8\n"
                                           "      max: 8\n"),
                              kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->runs.warm_until.has_value());
  EXPECT_DOUBLE_EQ(spec->runs.warm_until->ci_halfwidth, 0.005);
  EXPECT_EQ(spec->runs.warm_until->min, 8);
  EXPECT_EQ(spec->runs.warm_until->max, 8);
  EXPECT_EQ(spec->runs.warm_until->line, 6);
  EXPECT_EQ(spec->runs.warm, 8);
}

TEST(WarmUntilSpecTest, TheCountFormStillWorksAndSetsNoUntil) {
  auto spec = ParseSeriesSpec(absl::StrCat(kHead, "runs:\n  warm: 4\n"), kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->runs.warm, 4);
  EXPECT_FALSE(spec->runs.warm_until.has_value());
  auto none = ParseSeriesSpec(kHead, kSource);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->runs.warm_until.has_value());
}

TEST(WarmUntilSpecTest, RefusesBadPercentagesWithTheirLine) {
  const std::string expected_end = " such as 2% or 0.5%, got ";
  for (const auto& [value, shown] : std::vector<std::pair<std::string, std::string>>{
           {"0.02", "'0.02'"},
           {"0%", "'0%'"},
           {"100%", "'100%'"},
           {"150%", "'150%'"},
           {"-2%", "'-2%'"},
           {"two%", "'two%'"},
           {"2 %", "'2 %'"},
           {"inf%", "'inf%'"},
           {"1e1%", "'1e1%'"},
           {"[2%]", "a list"}}) {
    SCOPED_TRACE(value);
    ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm:\n    until:\n      ci_halfwidth: ", value, "\n      max: 30\n"),
                  absl::StrCat("spec.yaml:7: runs.warm.until.ci_halfwidth must be a percentage above 0% and below "
                               "100%",
                               expected_end, shown));
  }
}

TEST(WarmUntilSpecTest, RefusesMinBelowTheSpreadMinimumAndMaxBelowMinOrAboveTheBound) {
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, min: 4, max: 30}}\n"),
                "spec.yaml:5: runs.warm.until.min must be a whole number from 5 to 1000000, got '4'");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 4}}\n"),
                "spec.yaml:5: runs.warm.until.max must be a whole number from 5 to 1000000, got '4'");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, min: 10, max: 9}}\n"),
                "spec.yaml:5: runs.warm.until.max must be a whole number from 10 to 1000000, got '9'");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 1000001}}\n"),
                "spec.yaml:5: runs.warm.until.max must be a whole number from 5 to 1000000, got '1000001'");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: \"30\"}}\n"),
                "spec.yaml:5: runs.warm.until.max must be a whole number from 5 to 1000000, got \"30\" (quoted: a "
                "string)");
}

TEST(WarmUntilSpecTest, RefusesMissingAndUnknownKeys) {
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: {until: {max: 30}}\n"),
                "spec.yaml:5: runs.warm.until: missing key 'ci_halfwidth' (the largest half-width of the 95% "
                "confidence interval of the median, relative to the median, e.g. 2%)");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm:\n    until:\n      ci_halfwidth: 2%\n"),
                "spec.yaml:7: runs.warm.until: missing key 'max' (the most warm calls, e.g. 30)");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm:\n    until:\n      ci_halfwidth: 2%\n      max: 30\n"
                                    "      level: 90%\n"),
                "spec.yaml:9: unknown key 'runs.warm.until.level' (known keys: ci_halfwidth, max, min)");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm:\n    count: 4\n"),
                "spec.yaml:6: unknown key 'runs.warm.count' (known keys: until)");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: {}\n"),
                "spec.yaml:5: runs.warm as a map must be {until: {ci_halfwidth: 2%, max: 30} (min, the accepted "
                "calls before the test applies, is optional)}");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm:\n    until: 30\n"),
                "spec.yaml:6: runs.warm.until must be a map such as {ci_halfwidth: 2%, max: 30} (min, the accepted "
                "calls before the test applies, is optional), got '30'");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: [until]\n"),
                "spec.yaml:5: runs.warm must be a whole number from 0 to 1000000, got a list");
}

TEST(WarmUntilSpecTest, UntilNeedsAColdRunLikeACount) {
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  cold: 0\n  warm: {until: {ci_halfwidth: 2%, max: 30}}\n"),
                "spec.yaml:6: runs.warm needs runs.cold of at least 1: the first call after the backend is "
                "(re)opened is the cold run, never a warm one");
}

// The schema documents the map form with the parser's keys, default and bounds.
TEST(WarmUntilSpecTest, TheSchemaDescribesTheUntilForm) {
  auto text = Env::Default()->ReadFile(std::string(BENCHFLEET_SOURCE_DIR) + "/common/spec/series-spec.schema.json");
  ASSERT_TRUE(text.ok()) << text.status();
  const nlohmann::json schema = nlohmann::json::parse(*text);
  const nlohmann::json& warm = schema["properties"]["runs"]["properties"]["warm"];
  ASSERT_EQ(warm["oneOf"].size(), 2u);
  EXPECT_EQ(warm["oneOf"][0]["$ref"], "#/$defs/count");
  const nlohmann::json& until = warm["oneOf"][1]["properties"]["until"];
  std::set<std::string> keys;
  for (const auto& [key, value] : until["properties"].items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"ci_halfwidth", "max", "min"}));
  EXPECT_EQ(until["required"], nlohmann::json({"ci_halfwidth", "max"}));
  EXPECT_EQ(until["properties"]["min"]["default"], stats::kMinRunsForSpread);
  EXPECT_EQ(until["properties"]["min"]["minimum"], stats::kMinRunsForSpread);
  EXPECT_EQ(until["properties"]["max"]["maximum"], 1000000);
}

}  // namespace
}  // namespace benchfleet
