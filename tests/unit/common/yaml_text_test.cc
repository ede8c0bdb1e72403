#include "common/yaml_text.h"

#include <gtest/gtest.h>

#include <string>

namespace benchfleet {
namespace {

TEST(YamlTextTest, TextIsFine) {
  EXPECT_TRUE(CheckYamlText("series: s\ntask: t\r\n\tx: \"é ü 中 😀\"\n", "s.yaml").ok());
  EXPECT_TRUE(CheckYamlText("\xEF\xBB\xBFseries: s\n", "s.yaml").ok());  // a byte-order mark
  EXPECT_TRUE(CheckYamlText("", "s.yaml").ok());
}

TEST(YamlTextTest, Latin1IsRefusedAtItsLineAndColumn) {
  const absl::Status s = CheckYamlText("series: s\ntask: caf\xE9\n", "s.yaml");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "s.yaml:2:10: not UTF-8 text (byte 0xE9); a series spec is YAML text: is this the right file?");
}

TEST(YamlTextTest, ColumnsCountCharactersNotBytes) {
  EXPECT_EQ(CheckYamlText("é: \xFF", "s.yaml").message(),
            "s.yaml:1:4: not UTF-8 text (byte 0xFF); a series spec is YAML text: is this the right file?");
}

TEST(YamlTextTest, BinaryIsRefused) {
  EXPECT_EQ(CheckYamlText(std::string("\x7F" "ELF\x02\x01\x01\x00", 8), "a.out").message(),
            "a.out:1:1: control character 0x7F is not allowed in YAML text; a series spec is YAML text: is this "
            "the right file?");
  EXPECT_EQ(CheckYamlText(std::string("a: b\n\x00", 6), "s.yaml").message(),
            "s.yaml:2:1: control character 0x00 is not allowed in YAML text; a series spec is YAML text: is this "
            "the right file?");
}

TEST(YamlTextTest, InvalidSequencesAreRefused) {
  for (const std::string bad : {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\x80"}) {
    EXPECT_EQ(CheckYamlText("x: " + bad, "s.yaml").code(), absl::StatusCode::kInvalidArgument)
        << "byte 0x" << std::hex << static_cast<int>(static_cast<unsigned char>(bad[0]));
  }
}

}  // namespace
}  // namespace benchfleet
