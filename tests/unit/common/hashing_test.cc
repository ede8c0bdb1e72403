#include "common/hashing.h"

#include "gtest/gtest.h"

namespace benchfleet {
namespace {

TEST(HashingTest, Sha256OfKnownInputs) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashingTest, NewUuidIsVersion4AndUnique) {
  std::string a = NewUuid(), b = NewUuid();
  EXPECT_TRUE(IsUuid(a));
  EXPECT_NE(a, b);
  EXPECT_EQ(a[14], '4');
  EXPECT_NE(std::string("89ab").find(a[19]), std::string::npos);
}

TEST(HashingTest, IsUuidRejectsNearMisses) {
  EXPECT_TRUE(IsUuid("123e4567-e89b-42d3-a456-426614174000"));
  EXPECT_FALSE(IsUuid("123e4567e89b42d3a456426614174000"));
  EXPECT_FALSE(IsUuid("123e4567-e89b-42d3-a456-42661417400g"));
  EXPECT_FALSE(IsUuid(""));
}

}  // namespace
}  // namespace benchfleet
