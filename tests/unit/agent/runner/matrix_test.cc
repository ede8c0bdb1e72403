// Matrix expansion: the order of combinations, the backend's default axes, refusals.
#include "agent/runner/matrix.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/agent/runner/fake_backend.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using testing::FakeBackend;

SeriesSpec Spec(const std::string& matrix) {
  auto spec = ParseSeriesSpec("series: s\ntask: t\nbackend: fake\n" + matrix, "spec.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

std::vector<std::string> Labels(const std::vector<Combination>& combinations) {
  std::vector<std::string> labels;
  for (const Combination& c : combinations) labels.push_back(CombinationLabel(c));
  return labels;
}

TEST(MatrixTest, FirstAxisIsOutermostInTheSpecsOrder) {
  FakeBackend backend(Env::Default());
  auto combinations = ExpandMatrix(Spec("matrix:\n  mode: [cpu, gpu]\n  n_predict: [256, 64]\n"), backend);
  ASSERT_TRUE(combinations.ok()) << combinations.status();
  EXPECT_THAT(Labels(*combinations),
              ElementsAre("cpu n_predict=256", "cpu n_predict=64", "gpu n_predict=256", "gpu n_predict=64"));
  EXPECT_EQ((*combinations)[1], (Combination{{"mode", "cpu"}, {"n_predict", "64"}}));
}

TEST(MatrixTest, AxesTheSpecDoesNotListTakeTheBackendsDefaults) {
  FakeBackend backend(Env::Default());  // default modes: gpu, cpu
  auto combinations = ExpandMatrix(Spec("matrix:\n  n_predict: [128, 512]\n"), backend);
  ASSERT_TRUE(combinations.ok()) << combinations.status();
  EXPECT_THAT(Labels(*combinations),
              ElementsAre("gpu n_predict=128", "cpu n_predict=128", "gpu n_predict=512", "cpu n_predict=512"));

  auto defaults_only = ExpandMatrix(Spec(""), backend);
  ASSERT_TRUE(defaults_only.ok());
  EXPECT_THAT(Labels(*defaults_only), ElementsAre("gpu", "cpu"));
}

TEST(MatrixTest, NoAxisAtAllIsOneEmptyCombination) {
  FakeBackend backend(Env::Default());
  backend.set_default_modes({});
  auto combinations = ExpandMatrix(Spec(""), backend);
  ASSERT_TRUE(combinations.ok());
  ASSERT_EQ(combinations->size(), 1u);
  EXPECT_TRUE((*combinations)[0].empty());
  EXPECT_EQ(CombinationLabel((*combinations)[0]), "-");
}

TEST(MatrixTest, AnAxisTheBackendDoesNotKnowIsRefusedWithItsLine) {
  FakeBackend backend(Env::Default());
  const absl::Status s = ExpandMatrix(Spec("matrix:\n  mode: [gpu]\n  batch: [1, 8]\n"), backend).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "spec.yaml:6: matrix axis 'batch' is not one the fake backend understands (its axes: mode, "
                         "n_predict)");
}

TEST(MatrixTest, ACombinationTheBackendRefusesFailsBeforeAnythingRuns) {
  FakeBackend backend(Env::Default());
  const absl::Status s = ExpandMatrix(Spec("matrix:\n  mode: [gpu, tpu]\n"), backend).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "spec.yaml: matrix combination tpu: mode 'tpu' is not in the fake section's modes (gpu, cpu)");
  EXPECT_TRUE(backend.events().empty());
}

TEST(MatrixTest, LabelsPutTheModeFirst) {
  EXPECT_EQ(CombinationLabel({{"mode", "gpu"}}), "gpu");
  EXPECT_EQ(CombinationLabel({{"batch_size", "8"}, {"mode", "gpu"}, {"n_predict", "64"}}),
            "gpu batch_size=8 n_predict=64");
  EXPECT_EQ(CombinationLabel({{"n_predict", "64"}}), "n_predict=64");
}

}  // namespace
}  // namespace benchfleet::agent
