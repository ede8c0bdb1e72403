#include "common/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace benchfleet {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

// RFC 3720 (iSCSI), appendix B.4: the CRC-32C of its test patterns.
TEST(Crc32cTest, MatchesTheRfc3720TestVectors) {
  EXPECT_EQ(Crc32c(std::string(32, '\x00')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
  // An iSCSI SCSI Read (10) command PDU.
  const std::string pdu = Bytes({0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});
  EXPECT_EQ(Crc32c(pdu), 0xD9963A56u);
}

TEST(Crc32cTest, MatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
}

TEST(Crc32cTest, ExtendEqualsOneCrcOverBothPieces) {
  EXPECT_EQ(Crc32cExtend(Crc32c("1234"), "56789"), 0xE3069283u);
  EXPECT_EQ(Crc32cExtend(Crc32c(""), "123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32cExtend(Crc32c("123456789"), ""), 0xE3069283u);
}

}  // namespace
}  // namespace benchfleet
