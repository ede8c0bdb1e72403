// The order of matrix values and combinations for people: numbers as numbers (4 before 16),
// words bytewise, numbers before words, a total order.
#include "common/matrix_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace benchfleet {
namespace {

using ::testing::ElementsAre;

TEST(MatrixOrderTest, NumbersSortAsNumbers) {
  std::vector<std::string> concurrency = {"16", "4", "1", "8"};
  std::sort(concurrency.begin(), concurrency.end(), MatrixValueLess);
  EXPECT_THAT(concurrency, ElementsAre("1", "4", "8", "16"));

  std::vector<std::string> mixed = {"1e3", "0.5", "-2", "100", "2.25"};
  std::sort(mixed.begin(), mixed.end(), MatrixValueLess);
  EXPECT_THAT(mixed, ElementsAre("-2", "0.5", "2.25", "100", "1e3"));
}

TEST(MatrixOrderTest, WordsSortBytewiseAfterNumbers) {
  std::vector<std::string> values = {"gpu", "16", "cpu", "4", "0x10", "4 GB"};
  std::sort(values.begin(), values.end(), MatrixValueLess);
  // "0x10" and "4 GB" are not plain numbers: words.
  EXPECT_THAT(values, ElementsAre("4", "16", "0x10", "4 GB", "cpu", "gpu"));
}

TEST(MatrixOrderTest, EqualNumbersWrittenDifferentlyStayDistinct) {
  EXPECT_TRUE(MatrixValueLess("8", "8.0"));
  EXPECT_FALSE(MatrixValueLess("8.0", "8"));
  EXPECT_FALSE(MatrixValueLess("8", "8"));
  const std::set<std::string, decltype(&MatrixValueLess)> set({"8", "8.0", "08"}, &MatrixValueLess);
  EXPECT_EQ(set.size(), 3u);
}

TEST(MatrixOrderTest, MatrixStringsCompareAxisByAxis) {
  std::vector<std::string> matrices = {"concurrency=16;mode=external", "concurrency=4;mode=external",
                                       "concurrency=1;mode=external", "concurrency=8;mode=external"};
  std::sort(matrices.begin(), matrices.end(), MatrixStringLess);
  EXPECT_THAT(matrices, ElementsAre("concurrency=1;mode=external", "concurrency=4;mode=external",
                                    "concurrency=8;mode=external", "concurrency=16;mode=external"));
  // The first axis decides first; an empty matrix and a prefix come first.
  EXPECT_TRUE(MatrixStringLess("batch_size=16;mode=amd", "batch_size=16;mode=nvidia"));
  EXPECT_TRUE(MatrixStringLess("batch_size=4;mode=nvidia", "batch_size=16;mode=amd"));
  EXPECT_TRUE(MatrixStringLess("", "mode=gpu"));
  EXPECT_TRUE(MatrixStringLess("mode=gpu", "mode=gpu;n_predict=64"));
  EXPECT_FALSE(MatrixStringLess("mode=gpu", "mode=gpu"));
  // Different axes: by name.
  EXPECT_TRUE(MatrixStringLess("batch_size=16", "mode=cpu"));

  std::set<std::string, MatrixStringOrder> cells = {"steps=30", "steps=20", "steps=100"};
  EXPECT_THAT(std::vector<std::string>(cells.begin(), cells.end()), ElementsAre("steps=20", "steps=30", "steps=100"));
}

TEST(MatrixOrderTest, CombinationsCompareLikeTheirStrings) {
  using Combination = std::map<std::string, std::string>;
  EXPECT_TRUE(MatrixLess(Combination{{"concurrency", "4"}}, Combination{{"concurrency", "16"}}));
  EXPECT_FALSE(MatrixLess(Combination{{"concurrency", "16"}}, Combination{{"concurrency", "4"}}));
  EXPECT_TRUE(MatrixLess(Combination{}, Combination{{"mode", "gpu"}}));
  EXPECT_TRUE(MatrixLess(Combination{{"batch_size", "8"}, {"mode", "none"}},
                         Combination{{"batch_size", "16"}, {"mode", "amd"}}));
}

}  // namespace
}  // namespace benchfleet
