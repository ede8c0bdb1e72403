#include "agent/probes/tool_values.h"

#include <gtest/gtest.h>

namespace benchfleet::agent {
namespace {

TEST(ToolValuesTest, NumbersWithAndWithoutUnits) {
  EXPECT_EQ(ParseNumber("143771"), 143771.0);
  EXPECT_EQ(ParseNumber(" 143771 MiB"), 143771.0);
  EXPECT_EQ(ParseNumber("78.38 W"), 78.38);
  EXPECT_EQ(ParseNumber("(1700Mhz)"), 1700.0);
  EXPECT_EQ(ParseNumber("35.0"), 35.0);
  EXPECT_EQ(ParseNumber("0 %"), 0.0);
}

TEST(ToolValuesTest, PlaceholdersAndGarbageAreNoNumber) {
  for (const char* value : {"[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]", "[GPU is lost]", "[Not Found]",
                            "", "  ", "-", "abc", "12abc3", "1e999", "0x1f", "12;rm"}) {
    EXPECT_EQ(ParseNumber(value), std::nullopt) << value;
  }
  EXPECT_TRUE(IsMissingValue("[Not Supported]"));
  EXPECT_FALSE(IsMissingValue("NVIDIA H200"));
}

TEST(ToolValuesTest, HexMasks) {
  EXPECT_EQ(ParseHexMask("0x0000000000000001"), 1u);
  EXPECT_EQ(ParseHexMask(" 0x0000000000000060 "), 0x60u);
  EXPECT_EQ(ParseHexMask("0xFF"), 0xFFu);
  EXPECT_EQ(ParseHexMask("[N/A]"), std::nullopt);
  EXPECT_EQ(ParseHexMask("0x"), std::nullopt);
  EXPECT_EQ(ParseHexMask("0x00000000000000001"), std::nullopt);  // 17 digits: more than 64 bits
  EXPECT_EQ(ParseHexMask("0xZZ"), std::nullopt);
  EXPECT_EQ(ParseHexMask("1"), std::nullopt);
}

TEST(ToolValuesTest, CsvAndLines) {
  EXPECT_EQ(SplitCsvFields(" 0, NVIDIA H200 ,[N/A]"), (std::vector<std::string>{"0", "NVIDIA H200", "[N/A]"}));
  EXPECT_EQ(NonEmptyLines("a\r\n\n  \nb\n"), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace benchfleet::agent
